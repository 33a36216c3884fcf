import { connect } from 'node:net';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { type Person, signIn } from '../helpers/portal.js';
import { startReceiver } from '../helpers/receiver.js';
import { startSmtp } from '../helpers/smtp.js';
import { waitFor } from '../helpers/wait.js';

const smtp = await startSmtp(t);
const gw = await startGateway(t, {
  portal: { smtp: { url: smtp.url } },
  limits: { invalid_key_throttle: { max_attempts: 1000 } },
  webhooks: { allow_private_addresses: true, allow_http: true, retry_delays_ms: [100, 100], poll_interval_ms: 50 },
});
let seq = 0;
const address = (): string => `member${++seq}@example.test`;
const SIMPLE = '/fuel-api/api/simple-current.php';
const status = async (r: Promise<Response>): Promise<number> => {
  const res = await r;
  await res.arrayBuffer();
  return res.status;
};
const callWith = (g: TestGateway, key: string) => status(g.get(`${SIMPLE}?api_key=${key}`));
const admin = (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${gw.app.adminAddress.port}${path}`, init);

interface KeyBody {
  key: { id: string; name: string };
  api_key: string;
  previous?: { id: string };
}
async function newKey(p: Person, name = 'k'): Promise<KeyBody> {
  const r = await p.call('POST', '/portal/api/keys', { name });
  if (r.status !== 201) throw new Error(`creating a key answered ${r.status}`);
  return (await r.json()) as KeyBody;
}

t.test('keys: created and shown once, listed, rotated with a grace (both work), the old one revoked', async (t) => {
  const p = await signIn(gw, smtp, address());
  const made = await newKey(p, 'ci');
  t.match(made.api_key, /^fpg_/);
  t.equal(await callWith(gw, made.api_key), 200, 'the new key calls the API');
  const list = (await (await p.call('GET', '/portal/api/keys')).json()) as {
    keys: Array<{ id: string; name: string }>;
  };
  t.ok(list.keys.some((k) => k.id === made.key.id && k.name === 'ci'));
  t.notOk(JSON.stringify(list).includes(made.api_key), 'the list never holds a secret');
  t.equal(
    await status(p.call('POST', `/portal/api/keys/${made.key.id}/rotate`, { grace_s: 1234 })),
    400,
    'a grace not offered',
  );
  const rolled = await p.call('POST', `/portal/api/keys/${made.key.id}/rotate`, { grace_s: 900 });
  t.equal(rolled.status, 201);
  const r = (await rolled.json()) as KeyBody;
  t.equal(r.previous?.id, made.key.id);
  t.same([await callWith(gw, made.api_key), await callWith(gw, r.api_key)], [200, 200], 'both work in the grace');
  t.equal(await status(p.call('DELETE', `/portal/api/keys/${made.key.id}`)), 204);
  t.equal(await callWith(gw, made.api_key), 401, 'the old key is refused');
  const logs = gw.logs();
  t.match(logs, new RegExp(`"action":"key.rotate"[^\\n]*"from":"portal:${p.email}"`), 'audited naming the member');
  t.match(logs, new RegExp(`"action":"key.revoke"[^\\n]*"from":"portal:${p.email}"`));
});

t.test("keys: the admin API's limits hold (never the last key)", async (t) => {
  const p = await signIn(gw, smtp, address());
  const { keys } = (await (await p.call('GET', '/portal/api/keys')).json()) as { keys: Array<{ id: string }> };
  t.equal(keys.length, 1, 'the account made at sign-up has its first key');
  t.equal(await status(p.call('DELETE', `/portal/api/keys/${keys[0]?.id}`)), 409);
});

t.test("a member of account A reading or changing account B's key by id: 404, and B's key works on", async (t) => {
  const a = await signIn(gw, smtp, address());
  const b = await signIn(gw, smtp, address());
  const theirs = await newKey(b);
  t.not(a.account, b.account);
  t.equal(await status(a.call('POST', `/portal/api/keys/${theirs.key.id}/rotate`, { grace_s: 0 })), 404);
  t.equal(await status(a.call('DELETE', `/portal/api/keys/${theirs.key.id}`)), 404);
  t.equal(await status(a.call('POST', `/portal/api/keys/${theirs.key.id}/delete`, {})), 404);
  t.equal(await status(a.call('POST', '/portal/api/switch', { account_id: b.account })), 404, 'nor switch to it');
  t.equal(await callWith(gw, theirs.api_key), 200);
});

t.test('usage: the current period and 90 days from the ledger, and a formula-safe CSV', async (t) => {
  const p = await signIn(gw, smtp, address());
  const made = await newKey(p);
  for (let i = 0; i < 3; i++) t.equal(await callWith(gw, made.api_key), 200);
  const body = (await (await p.call('GET', '/portal/api/usage')).json()) as {
    usage: { requests_used: number; plan_type: string };
    days: Array<{ day: string; requests: number }>;
  };
  t.equal(body.usage.requests_used, 3);
  t.equal(body.usage.plan_type, 'developer');
  t.equal(body.days.length, 90);
  t.equal(body.days.at(-1)?.requests, 3, "today's requests");
  await admin(`/admin/accounts/${p.account}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ label: '=HYPERLINK("http://evil")' }),
  });
  const csv = await (await p.call('GET', '/portal/api/usage.csv')).text();
  t.match(csv, /^account_id,label,plan,date,requests\r\n/);
  t.match(csv, /,"'=HYPERLINK\(""http:\/\/evil""\)",developer,\d{4}-\d\d-\d\d,3\r\n/, 'the label made text');
});

t.test(
  'members: an owner invites and removes; a developer can do neither; a removed member is signed out',
  async (t) => {
    const owner = await signIn(gw, smtp, address());
    const devEmail = address();
    const invited = await owner.call('POST', '/portal/api/members', { email: devEmail, role: 'developer' });
    t.equal(invited.status, 201);
    const dev = await signIn(gw, smtp, devEmail);
    t.equal(dev.account, owner.account, 'the invited address signs in to the account, no sign-up');
    t.equal(await status(dev.call('POST', '/portal/api/members', { email: address(), role: 'owner' })), 403);
    t.equal(await status(dev.call('DELETE', `/portal/api/members/${encodeURIComponent(owner.email)}`)), 403);
    t.equal(await status(dev.call('GET', '/portal/api/members')), 200, 'a developer reads the list');
    t.equal(
      await status(owner.call('DELETE', `/portal/api/members/${encodeURIComponent(owner.email)}`)),
      409,
      'the last owner',
    );
    t.equal(await status(owner.call('DELETE', '/portal/api/members/%E0%A4%A')), 404, 'a malformed address');
    t.equal(await status(owner.call('DELETE', `/portal/api/members/${encodeURIComponent(devEmail)}`)), 204);
    t.equal(await status(dev.call('GET', '/portal/api/keys')), 401, 'removed: no longer in');
  },
);

t.test('a cross-site form post and a post without the CSRF token: 403, nothing changed', async (t) => {
  const p = await signIn(gw, smtp, address());
  const form = (origin: string, body: string) =>
    status(
      gw.get('/portal/api/keys', {
        method: 'POST',
        headers: { cookie: p.cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
        body,
      }),
    );
  t.equal(
    await form('https://evil.example', `name=x&csrf_token=${p.csrf}`),
    403,
    'foreign Origin, even with the token',
  );
  t.equal(await form(gw.base, 'name=x'), 403, 'no token');
  t.equal(await form(gw.base, 'name=x&csrf_token=wrong'), 403, 'a wrong token');
  t.equal(
    await form('null', `name=x&csrf_token=${p.csrf}`),
    403,
    'Origin: null (a sandboxed or opaque page), with the token',
  );
  const crossSite = await gw.get('/portal/api/keys', {
    method: 'POST',
    headers: { cookie: p.cookie, 'sec-fetch-site': 'cross-site', 'content-type': 'application/x-www-form-urlencoded' },
    body: `name=x&csrf_token=${p.csrf}`,
  });
  t.equal(crossSite.status, 403, 'Sec-Fetch-Site: cross-site and no Origin, with the token');
  const plain = await gw.get('/portal/api/keys', {
    method: 'POST',
    headers: { cookie: p.cookie, origin: 'https://evil.example', 'content-type': 'text/plain' },
    body: JSON.stringify({ name: 'x', csrf_token: p.csrf }),
  });
  t.equal(plain.status, 403, 'a text/plain JSON body (a form with enctype=text/plain) from another origin');
  const { keys } = (await (await p.call('GET', '/portal/api/keys')).json()) as { keys: unknown[] };
  t.equal(keys.length, 1);
  t.equal(await form(gw.base, `name=x&csrf_token=${p.csrf}`), 201, 'the page itself');
});

t.test('pages: work without script, escape HTML in names, strict CSP, no framing', async (t) => {
  const p = await signIn(gw, smtp, address());
  await newKey(p, '<script>alert(1)</script>');
  const page = await gw.get('/portal/', { headers: { cookie: p.cookie } });
  const html = await page.text();
  t.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  t.match(html, '<script src="/portal/portal.js" defer></script>', 'its one script, a file of its own');
  t.notMatch(html.replace('<script src="/portal/portal.js" defer></script>', ''), /<script/, 'no other script');
  t.match(page.headers.get('content-security-policy'), /default-src 'none'; script-src 'self'.*frame-ancestors 'none'/);
  t.notMatch(page.headers.get('content-security-policy'), /unsafe-inline/);
  const signedOut = await (await gw.get('/portal/')).text();
  t.match(signedOut, /<form method="post" action="\/portal\/api\/sign-in">/, 'the sign-in form for a stranger');
  const created = await gw.get('/portal/api/keys', {
    method: 'POST',
    headers: { cookie: p.cookie, origin: gw.base, 'content-type': 'application/x-www-form-urlencoded' },
    body: `name=${encodeURIComponent('"><b>x')}&csrf_token=${p.csrf}`,
  });
  const shown = await created.text();
  t.match(shown, /<code>fpg_[A-Za-z0-9_-]+<\/code>/, 'the secret, once');
  t.match(shown, /&quot;&gt;&lt;b&gt;x/);
});

t.test('the portal API is described in its own OpenAPI 3.1 document', async (t) => {
  const doc = (await (await gw.get('/portal/openapi.json')).json()) as {
    openapi: string;
    paths: Record<string, unknown>;
  };
  t.equal(doc.openapi, '3.1.0');
  const source = JSON.stringify(doc);
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source, absoluteRef: 'openapi.json', config });
  t.same(
    problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} ${p.message}`),
    [],
    "Redocly's recommended rules find no error",
  );
  for (const path of [
    '/sign-in',
    '/sign-out',
    '/me',
    '/keys',
    '/keys/{key_id}/rotate',
    '/keys/{key_id}',
    '/usage',
    '/usage.csv',
    '/members',
    '/members/{email}',
    '/passkeys',
    '/passkey-sign-in',
  ])
    t.ok(doc.paths[path], path);
});

t.test('with portal.enabled off, /portal/ is not there', async (t) => {
  const off = await startGateway(t, { portal: { enabled: false } });
  t.equal(await status(off.get('/portal/')), 404);
  t.equal(await status(off.get('/portal/api/me')), 404);
});

t.test("key changes in the portal raise the admin API's key events", async (t) => {
  const receiver = await startReceiver(t);
  const { body } = await adminCall(gw, 'POST', '/admin/webhooks', {
    url: receiver.url,
    events: ['key.created', 'key.rotated', 'key.revoked'],
  });
  const p = await signIn(gw, smtp, address());
  const made = await newKey(p);
  const rolled = (await (
    await p.call('POST', `/portal/api/keys/${made.key.id}/rotate`, { grace_s: 0 })
  ).json()) as KeyBody;
  t.equal(await status(p.call('DELETE', `/portal/api/keys/${rolled.key.id}`)), 204);
  const ours = () =>
    receiver
      .verified(body.secret as string)
      .filter((g) => g.event.data['account_id'] === p.account)
      .map((g) => g.event.type);
  await waitFor('the three events', () =>
    ['key.created', 'key.rotated', 'key.revoked'].every((e) => ours().includes(e)),
  );
  t.pass(`events: ${[...new Set(ours())].join(', ')}`);
});

t.test('a person in two accounts switches between them; each keeps its own keys', async (t) => {
  const x = await signIn(gw, smtp, address());
  const other = await signIn(gw, smtp, address());
  await other.call('POST', '/portal/api/members', { email: x.email, role: 'developer' });
  const me = async () =>
    (await (await x.call('GET', '/portal/api/me')).json()) as {
      account: { id: string; role: string };
      accounts: unknown[];
    };
  t.equal((await me()).accounts.length, 2);
  const switched = await x.call('POST', '/portal/api/switch', { account_id: other.account });
  t.equal(switched.status, 200);
  t.same((await me()).account, { id: other.account, plan: 'developer', role: 'developer' });
  t.equal(await status(x.call('POST', '/portal/api/members', { email: address() })), 403, 'a developer there');
});

t.test('a body that is not JSON, or over 16 KiB, is refused', async (t) => {
  const p = await signIn(gw, smtp, address());
  const raw = (body: string) =>
    status(
      gw.get('/portal/api/keys', {
        method: 'POST',
        headers: { cookie: p.cookie, origin: gw.base, 'x-csrf-token': p.csrf, 'content-type': 'application/json' },
        body,
      }),
    );
  t.equal(await raw('{not json'), 400);
  t.equal(await raw(JSON.stringify({ name: 'x'.repeat(20_000) })), 400);
  t.equal(await raw('[]'), 400);
  t.equal(await raw('{"name":"x","__proto__":{"scopes":["admin"]}}'), 400, 'a __proto__ key: an unknown field');
  t.equal(await raw('{"name":"x","constructor":{"prototype":{"admin":true}}}'), 400, 'a constructor key too');
  t.equal(({} as Record<string, unknown>)['admin'], undefined, 'no prototype touched');

  // A client that declares a gigabyte and keeps sending: answered, and cut off rather than drained,
  // whether its body was cut at 16 KiB or refused unread.
  const port = gw.app.publicAddress.port;
  const signedIn = `Origin: ${gw.base}\r\nCookie: ${p.cookie}\r\nX-CSRF-Token: ${p.csrf}\r\n`;
  for (const [headers, status] of [
    [signedIn, 400],
    ['', 401],
  ] as const) {
    const { head, sent, bound } = await streamGigabyte(port, '/portal/api/keys', headers);
    t.match(head, new RegExp(`^HTTP/1\\.1 ${status} [^]*\r\nConnection: close\r\n`, 'i'), `${status}, closing`);
    t.ok(sent < bound, `${status}: closed after ${(sent / 2 ** 20).toFixed(1)} MiB of 1 GB (bound 64 MiB)`);
  }
});

/** POSTs a body declared as 1 GB, sending until the server closes the connection or 64 MiB went. */
async function streamGigabyte(port: number, path: string, headers: string) {
  const socket = connect(port, '127.0.0.1');
  let head = '';
  let open = true;
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      open = false;
      resolve();
    }),
  );
  socket.on('data', (d: Buffer) => {
    head += d.toString();
  });
  socket.on('error', () => undefined);
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headers}Content-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n`,
  );
  const chunk = Buffer.alloc(64 * 1024, 32);
  const bound = 64 * 2 ** 20;
  let sent = 0;
  while (open && sent < bound) {
    if (!socket.write(chunk)) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed]);
    sent += chunk.length;
  }
  socket.destroy();
  return { head, sent, bound };
}
