import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { startGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';

// Its tests share nothing and spend most of their time waiting: they run 2 at a time.
t.jobs = 2;

const STRICT = {
  allow_private_addresses: false,
  allow_http: true,
  retry_delays_ms: [100],
  poll_interval_ms: 50,
  timeout_ms: 1000,
};

// Spellings of this machine, private networks and the metadata service, as an attacker would
// try them: each is refused when an endpoint is registered.
const REFUSED_BEFORE = [
  '127.0.0.1',
  '127.1',
  '2130706433',
  '0x7f000001',
  '0177.0.0.1',
  '0.0.0.0',
  '0',
  '10.0.0.1',
  '172.16.0.1',
  '192.168.1.1',
  '169.254.169.254',
  '100.64.0.1',
  '224.0.0.1',
  '255.255.255.255',
  '198.18.0.1',
  'localhost',
  '[::1]',
  '[::]',
  '[0:0:0:0:0:0:0:1]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[::ffff:169.254.169.254]',
  '[fe80::1]',
  '[fc00::1]',
  '[fd00::1]',
  '[fec0::1]',
  '[ff02::1]',
  '[64:ff9b::7f00:1]',
  '[64:ff9b::a9fe:a9fe]',
  '[100::1]',
  '[2001:db8::1]',
];

// IPv6 forms that carry a refused IPv4 address: IPv4-compatible (::/96, also as the URL parser
// writes ::127.0.0.1), IPv4-translated (::ffff:0:0/96, hex), local NAT64 (64:ff9b:1::/48, in
// each of its layouts), 6to4 (2002::/16), Teredo's client (2001::/32, bits inverted) and
// ISATAP's interface identifier.
const EMBEDDED = [
  '[::7f00:1]',
  '[::127.0.0.1]',
  '[::a9fe:a9fe]',
  '[::ffff:0:7f00:1]',
  '[::ffff:0:127.0.0.1]',
  '[::ffff:0:a00:1]',
  '[64:ff9b:1::7f00:1]',
  '[64:ff9b:1:7f00:0:100::]',
  // Local NAT64 in each RFC 6052 layout, each reading 10.1.2.3 at its own prefix length only
  // (/48, /56, /64, /72, /80, /96): every other layout reads a public address.
  '[64:ff9b:1:a01:2:379:404c:fc8f]',
  '[64:ff9b:1:c70a:1:203:6f40:874b]',
  '[64:ff9b:1:5db8:a:102:305:607]',
  '[64:ff9b:1:b640:16:a01:203:a872]',
  '[64:ff9b:1:622f:19:f0a:102:32f]',
  '[64:ff9b:1:18bf:a3:5818:a01:203]',
  '[2002:7f00:1::]',
  '[2002:a9fe:a9fe::1]',
  '[2001:0:4136:e378:8000:63bf:80ff:fffe]',
  '[2606:4700::5efe:7f00:1]',
];

// The same forms around public IPv4 addresses, and plain public addresses, stay accepted.
const ACCEPTED = [
  '93.184.216.34',
  '[2606:4700:4700::1111]',
  '[::ffff:93.184.216.34]',
  '[64:ff9b::5db8:d822]',
  '[2002:5db8:d822::1]',
];

t.test('every address form that reaches a refused IPv4 address is refused at registration', async (t) => {
  const gw = await startGateway(t, { webhooks: STRICT, demo_accounts: false, log: { access: false } });
  for (const host of [...REFUSED_BEFORE, ...EMBEDDED]) {
    const r = await adminCall(gw, 'POST', '/admin/webhooks', {
      url: `https://${host}/h`,
      events: ['prices.published'],
    });
    t.equal(r.status, 400, host);
    t.match(r.body.message, /^url: .* (resolves to|has no address|cannot resolve)/, host);
  }
  t.equal((await adminCall(gw, 'GET', '/admin/webhooks')).body.webhooks.length, 0, 'none was stored');
  for (const host of ACCEPTED) {
    const r = await adminCall(gw, 'POST', '/admin/webhooks', {
      url: `https://${host}/h`,
      events: ['prices.published'],
    });
    t.equal(r.status, 201, `${host} is public`);
  }
});

t.test('an endpoint stored with an embedded-IPv4 address is refused again at every delivery', async (t) => {
  const gw = await startGateway(t, { webhooks: STRICT, demo_accounts: false, log: { access: false } });
  const ids: string[] = [];
  for (const [i, host] of EMBEDDED.entries()) {
    // As an endpoint registered before this rule, or under webhooks.allow_private_addresses.
    const id = `wh_embedded${i}`;
    ids.push(id);
    await gw.app.store.events.putEndpoint({
      id,
      url: `http://${host}:9/h`,
      events: ['prices.published'],
      account_id: null,
      description: null,
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      previous_secret: null,
      previous_until_ms: null,
      created_via: 'operator',
      created_at: new Date().toISOString(),
    });
    t.equal((await adminCall(gw, 'POST', `/admin/webhooks/${id}/test`)).status, 202);
  }
  for (const [i, id] of ids.entries()) {
    const host = (EMBEDDED[i] as string).replace(/^\[|\]$/g, '');
    let last: Record<string, unknown> | undefined;
    await waitFor(`the attempt to ${host}`, async () => {
      last = (await adminCall(gw, 'GET', `/admin/webhooks/${id}/deliveries`)).body.deliveries[0];
      return last !== undefined && last.attempts !== 0;
    });
    t.match(last?.last_error, /^refused: .* resolves to .*loopback, private/, `${host} is refused at delivery`);
    t.equal(last?.last_status, null, `${host}: no connection was made`);
  }
});
