import t from 'tap';
import { gatewayProcess, privateConfig } from '../helpers/cli.js';
import { rawRequest } from '../helpers/raw.js';
import { waitFor } from '../helpers/wait.js';

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
