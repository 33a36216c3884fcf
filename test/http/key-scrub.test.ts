import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import t from 'tap';
import { generateKey } from '../../src/keys/key-generator.js';
import { gatewayProcess, privateConfig, ROOT } from '../helpers/cli.js';
import { startGateway } from '../helpers/gateway.js';
import { rawRequest } from '../helpers/raw.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitFor } from '../helpers/wait.js';

// Its tests share nothing and spend most of their time waiting: they run 3 at a time.
t.jobs = 3;

const SIMPLE = '/fuel-api/api/simple-current.php';

t.test('a key sent in the wrong place is never logged, in any spelling', async (t) => {
  const gw = await gatewayProcess(t, privateConfig({ demo_accounts: false }));
  const created = await fetch(`${gw.admin}/admin/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ plan: 'starter' }),
  });
  const key = ((await created.json()) as { api_key: string }).api_key;
  const port = Number(new URL(gw.base).port);
  const encoded = [...key].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  const targets = [
    `${SIMPLE}?apikey=${key}`,
    `${SIMPLE}?key=${key}`,
    `${SIMPLE}?api-key=${key}`,
    `${SIMPLE}?api_key%3D${key}`,
    `${SIMPLE};api_key=${key}`,
    `${SIMPLE}#api_key=${key}`,
    `/${key}`,
    `/fuel-api/${key}/x`,
    `http://${key}@localhost${SIMPLE}`,
    `${SIMPLE}?key=${encoded}`,
    `${SIMPLE}?key=${key.toUpperCase()}`,
    `${SIMPLE}?key=${key.slice(4)}`,
    `${SIMPLE}?key=${encoded.replace(/%/g, '%25')}`,
    `${SIMPLE}?key=${key.slice(0, 21)}%zz${key.slice(21)}`,
    `/x/${key.slice(4)}`,
  ];
  for (const target of targets)
    await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`);
  await waitFor('the access log lines', () => (gw.output().match(/"msg":"request"/g) ?? []).length >= targets.length);
  const code = await gw.stop('SIGTERM');
  t.equal(code, 0);
  const out = gw.output();
  const body = key.slice(4);
  t.notOk(out.includes(body), 'the key is not in the output');
  t.notOk(out.toLowerCase().includes(body.toLowerCase()), 'nor in another case');
  t.notOk(out.toLowerCase().includes(encoded.slice(12).toLowerCase()), 'nor percent-encoded');
  const pieces = Array.from({ length: body.length - 15 }, (_, i) => body.slice(i, i + 16).toLowerCase());
  t.notOk(
    pieces.some((piece) => out.toLowerCase().includes(piece)),
    'nor any 16 characters of it: not without its prefix, encoded twice, or split by an invalid escape',
  );
  t.ok((out.match(/\[REDACTED\]/g) ?? []).length >= targets.length, 'each line says where a key was');
});

t.test(
  'only what is or may be a key is redacted: the price file, a webhook event id and other long words are logged as they are',
  async (t) => {
    const receiver = await startReceiver(t);
    receiver.mode = { status: 500 };
    const gw = await gatewayProcess(
      t,
      privateConfig({
        demo_accounts: false,
        webhooks: { allow_private_addresses: true, allow_http: true, poll_interval_ms: 100, retry_delays_ms: [60_000] },
      }),
    );
    const [started] = await gw.waitFor(/^\{.*"msg":"price files loaded into the store".*$/m);
    const { files } = JSON.parse(started) as { files: string[] };
    const file = files.find((f) => f.endsWith('data/prices/sa-fuel-prices-2023-2026.json')) ?? '';
    t.ok(file, `the start line names the price file: ${files.join(', ')}`);
    t.ok(existsSync(resolve(ROOT, file)), 'as a path that exists');

    const post = async (path: string, body: unknown): Promise<Record<string, string>> =>
      (await (
        await fetch(`${gw.admin}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json()) as Record<string, string>;
    const hook = await post('/admin/webhooks', { url: receiver.url, events: ['prices.published'] });
    const { event_id } = await post(`/admin/webhooks/${hook['id']}/test`, {});
    const [failed] = await gw.waitFor(/^\{.*"msg":"webhook delivery failed; will retry".*$/m, 20_000);
    t.equal((JSON.parse(failed) as { event_id: string }).event_id, event_id, 'the failure line names the event id');
    t.equal(receiver.got[0]?.headers['webhook-id'], event_id, 'as the receiver got it in webhook-id');

    const words = 'a-long-but-harmless-parameter-value-of-60-characters-in-all'.padEnd(60, 'x');
    const r = await fetch(`${gw.base}/fuel-api/nothing?note=${words}`);
    await r.arrayBuffer();
    await waitFor('its access line', () => gw.output().includes(words), 5000);
    t.pass('a long word that is no key, in no key position, is logged as it is');
    t.notMatch(gw.output(), /REDACTED/, 'nothing in these lines was redacted');
  },
);

t.test('a key split over query parameters, with or without its prefix, is not logged', async (t) => {
  const gw = await gatewayProcess(t, privateConfig({ demo_accounts: false }));
  const created = await fetch(`${gw.admin}/admin/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ plan: 'starter' }),
  });
  const key = ((await created.json()) as { api_key: string }).api_key;
  const body = key.slice(4);
  const targets = [
    `${SIMPLE}?a=${body.slice(0, 19)}&b=${body.slice(19)}`,
    `${SIMPLE}?a=${key.slice(0, 21)}&b=${key.slice(21)}`,
    `${SIMPLE}?x=1&first=${body.slice(0, 12)}&second=${body.slice(12, 25)}&third=${body.slice(25)}`,
    // One value, the pieces apart by an escape whose hex digits run into the second piece.
    `${SIMPLE}?c=${body.slice(0, 19)}%20${body.slice(19)}`,
  ];
  for (const target of targets) await (await fetch(gw.base + target)).arrayBuffer();
  await waitFor('the access log lines', () => (gw.output().match(/"msg":"request"/g) ?? []).length >= targets.length);
  t.equal(await gw.stop('SIGTERM'), 0);
  const out = gw.output();
  for (const piece of [body.slice(0, 12), body.slice(12, 19), body.slice(19), body.slice(25), key.slice(21)])
    t.notOk(out.includes(piece), `no piece of the key is logged (${piece.length} characters)`);
  t.match(out, /"url":"[^"]*\?x=1&/, 'the rest of the query is logged');
});

t.test(
  'the in-process test gateway logs through the production logger: base fields on every line, keys scrubbed',
  async (t) => {
    const key = generateKey();
    // The price file in a directory named after a key: the start line logs its path.
    const dir = join(t.testdir(), key);
    mkdirSync(dir);
    const file = join(dir, 'prices.json');
    copyFileSync(resolve(ROOT, 'data/prices/sa-fuel-prices-2023-2026.json'), file);
    const gw = await startGateway(t, { prices: { file } });
    await (await gw.get('/healthz')).arrayBuffer();
    await waitFor('the start line', () => gw.logs().includes('price files loaded'), 5000);
    const lines = gw.logs().split('\n').filter(Boolean);
    t.ok(lines.length > 2, `${lines.length} lines`);
    t.ok(
      lines.every((l) => l.includes('"service":"fuel-gateway"')),
      'every line carries the production base fields',
    );
    t.notOk(gw.logs().includes(key.slice(4)), 'the key in the logged path is scrubbed');
    t.match(gw.logs(), /fpg_\[REDACTED\]/, 'and marked where it was');
  },
);

t.test(
  'a key split over parameter names and values, one piece maybe in a key position, is not logged in any piece',
  async (t) => {
    const gw = await gatewayProcess(t, privateConfig({ demo_accounts: false }));
    const created = await fetch(`${gw.admin}/admin/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'starter' }),
    });
    const key = ((await created.json()) as { api_key: string }).api_key;
    const body = key.slice(4);
    const targets = [
      `${SIMPLE}?api_key=${key.slice(0, 20)}&b=${key.slice(20)}`,
      `${SIMPLE}?a=${body.slice(0, 19)}&api_key=${body.slice(19)}`,
      `${SIMPLE}?${body.slice(0, 19)}=${body.slice(19)}`,
      `${SIMPLE}?x=1&${key.slice(0, 17)}=${key.slice(17)}`,
      `${SIMPLE}?${body.slice(0, 10)}=${body.slice(10, 24)}&${body.slice(24)}=2`,
    ];
    for (const target of targets) await (await fetch(gw.base + target)).arrayBuffer();
    await waitFor('the access log lines', () => (gw.output().match(/"msg":"request"/g) ?? []).length >= targets.length);
    t.equal(await gw.stop('SIGTERM'), 0);
    const out = gw.output();
    const pieces = [
      key.slice(20),
      body.slice(0, 19),
      body.slice(19),
      key.slice(4, 17),
      key.slice(17),
      body.slice(0, 10),
      body.slice(10, 24),
      body.slice(24),
    ];
    for (const piece of pieces) t.notOk(out.includes(piece), `no piece of the key is logged (${piece})`);
    t.match(out, /"url":"[^"]*\?x=1&/, 'the rest of the query is logged');
  },
);

t.test('a refused `?api_key=K` is logged as its route with the key redacted, made up or malformed alike', async (t) => {
  const gw = await gatewayProcess(t, privateConfig({ demo_accounts: false }));
  const port = Number(new URL(gw.base).port);
  const unknown = generateKey();
  const malformed = `${unknown.slice(0, -2)}zz`;
  for (const k of [unknown, malformed, 'not-a-key_at-all'])
    await rawRequest(port, `GET ${SIMPLE}?api_key=${k} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`);
  await waitFor('the access log lines', () => (gw.output().match(/"status":401/g) ?? []).length >= 3);
  t.equal(await gw.stop('SIGTERM'), 0);
  const lines = gw
    .output()
    .split('\n')
    .filter((l) => l.includes('"status":401'));
  t.equal(lines.length, 3);
  for (const line of lines) t.match(line, `"url":"${SIMPLE}?api_key=[REDACTED]"`);
  t.notOk(gw.output().includes(unknown.slice(4, 20)), 'the made-up key is not in the output');
});
