import t from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { type Person, signIn } from '../helpers/portal.js';
import { startSmtp } from '../helpers/smtp.js';

const smtp = await startSmtp(t);
const gw = await startGateway(t, {
  portal: { smtp: { url: smtp.url } },
  limits: { invalid_key_throttle: { max_attempts: 1000 } },
});
let seq = 0;
const address = (): string => `editor${++seq}@example.test`;
const SIMPLE = '/fuel-api/api/simple-current.php';
const callWith = async (key: string): Promise<number> => {
  const r = await gw.get(`${SIMPLE}?api_key=${key}`);
  await r.arrayBuffer();
  return r.status;
};

interface KeyView {
  id: string;
  name: string;
  scopes: string[];
  allowed_cidrs: string[];
}
async function newKey(p: Person): Promise<{ key: KeyView; api_key: string }> {
  return (await (await p.call('POST', '/portal/api/keys', { name: 'ci' })).json()) as { key: KeyView; api_key: string };
}
const patch = (p: Person, keyId: string, body: unknown) => p.call('PATCH', `/portal/api/keys/${keyId}`, body);

t.test(
  "PATCH /portal/api/keys/:key_id changes a key's name, scopes and allowlist through the admin API's patch",
  async (t) => {
    const p = await signIn(gw, smtp, address());
    const made = await newKey(p);
    const fenced = await patch(p, made.key.id, { name: 'erp <b>', allowed_cidrs: ['203.0.113.0/24'] });
    t.equal(fenced.status, 200);
    t.match(await fenced.json(), { key: { id: made.key.id, name: 'erp <b>', allowed_cidrs: ['203.0.113.0/24'] } });
    t.not(await callWith(made.api_key), 200, 'the allowlist holds at once: loopback is not in it');
    const opened = await patch(p, made.key.id, { allowed_cidrs: [] });
    t.match(await opened.json(), { key: { name: 'erp <b>', allowed_cidrs: [] } }, 'only the fields given change');
    t.equal(await callWith(made.api_key), 200);
    t.equal((await patch(p, made.key.id, {})).status, 400, 'nothing to change');
    t.equal((await patch(p, made.key.id, { scopes: ['everything'] })).status, 400, 'an unknown scope');
    t.equal((await patch(p, made.key.id, { name: 'x', key_hash: 'h' })).status, 400, 'an unknown field');
    const listed = (await (await p.call('GET', '/portal/api/keys')).json()) as { keys: KeyView[] };
    t.equal(listed.keys.find((k) => k.id === made.key.id)?.name, 'erp <b>');
    t.match(
      gw.logs(),
      new RegExp(`"action":"key.update"[^\\n]*"from":"portal:${p.email}"`),
      'audited naming the member',
    );
  },
);

t.test("another account's key: 404, unchanged; without the CSRF token: 403", async (t) => {
  const a = await signIn(gw, smtp, address());
  const b = await signIn(gw, smtp, address());
  const theirs = await newKey(b);
  t.equal((await patch(a, theirs.key.id, { name: 'mine now' })).status, 404);
  const noToken = await gw.get(`/portal/api/keys/${theirs.key.id}`, {
    method: 'PATCH',
    headers: { cookie: b.cookie, origin: gw.base, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'forged' }),
  });
  t.equal(noToken.status, 403);
  const listed = (await (await b.call('GET', '/portal/api/keys')).json()) as { keys: KeyView[] };
  t.equal(listed.keys.find((k) => k.id === theirs.key.id)?.name, 'ci', 'the key is as it was');
});
