import t from 'tap';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway } from '../helpers/gateway.js';
import { rawRequest } from '../helpers/raw.js';
import { waitFor } from '../helpers/wait.js';

const SIMPLE = '/fuel-api/api/simple-current.php';
const GENERATED = /^[\w-]{12}-[0-9a-z]+$/;

/** The access-log line of an answer, found by its request id. */
const accessLine = (logs: string, id: string): Record<string, unknown> | undefined =>
  logs
    .split('\n')
    .filter((l) => l.includes('"msg":"request"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l['req_id'] === id);

t.test('every answer, whatever its status, carries a new X-Request-Id that its access line names', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const key = gw.app.demoKeys['developer'] as string;
  const answers = [
    await gw.get(`${SIMPLE}?api_key=${key}`),
    await gw.get(`${SIMPLE}?api_key=${key}`, { method: 'HEAD' }),
    await gw.get(SIMPLE),
    await gw.get(`${SIMPLE}?api_key=nonsense`),
    await gw.get('/nothing-here'),
    await gw.get(SIMPLE, { method: 'POST' }),
    await gw.get('/healthz'),
  ];
  t.same(
    answers.map((r) => r.status),
    [200, 200, 401, 401, 404, 405, 200],
  );
  const ids = answers.map((r) => r.headers.get('x-request-id') ?? '');
  for (const id of ids) t.match(id, GENERATED, `generated id ${id}`);
  t.equal(new Set(ids).size, ids.length, 'each one its own');
  await waitFor('the access lines', () => ids.every((id) => accessLine(gw.logs(), id) !== undefined));
  t.same(
    ids.map((id) => accessLine(gw.logs(), id)?.['status']),
    answers.map((r) => r.status),
    'each access line has the id its answer gave',
  );
});

t.test('a refusal of the HTTP parser carries an X-Request-Id too', async (t) => {
  const gw = await startGateway(t);
  const answer = await rawRequest(gw.app.publicAddress.port, 'GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n');
  t.match(answer, /^HTTP\/1\.1 400 /);
  t.match(answer, /\r\nX-Request-Id: [\w-]{12}-[0-9a-z]+\r\n/);
});

t.test('a 500 gives its request id as `ref`, and the error log line names it', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const { api_key, account } = await newAccount(gw, { plan: 'starter' });
  await gw.app.store.accounts.updateAccount(account.id, { plan: 'retired' });
  const r = await gw.get(`${SIMPLE}?api_key=${api_key}`);
  t.equal(r.status, 500);
  const id = r.headers.get('x-request-id') ?? '';
  t.same(await r.json(), { success: false, message: 'Internal server error.', ref: id });
  await waitFor('the error line', () => gw.logs().includes('"msg":"request failed"'));
  const failed = gw
    .logs()
    .split('\n')
    .find((l) => l.includes('"msg":"request failed"')) as string;
  t.equal(JSON.parse(failed).req_id, id);
});

t.test("a trusted proxy's valid X-Request-Id is kept; an invalid one, or anyone else's, is replaced", async (t) => {
  const trusted = await startGateway(t, { server: { trusted_proxies: ['127.0.0.1'] } });
  const untrusted = await startGateway(t, { server: { trusted_proxies: ['10.9.9.9'] } });
  const idOf = async (gw: typeof trusted, given: string): Promise<string | null> =>
    (await gw.get('/healthz', { headers: { 'x-request-id': given } })).headers.get('x-request-id');
  const quoted = 'lb-"quoted"\\-1';
  t.equal(await idOf(trusted, 'lb-0a1b2c'), 'lb-0a1b2c', 'kept from a trusted proxy');
  t.equal(await idOf(trusted, 'x'.repeat(128)), 'x'.repeat(128), '128 characters are kept');
  t.equal(await idOf(trusted, quoted), quoted, 'any visible ASCII is kept');
  await waitFor('its access line', () => accessLine(trusted.logs(), quoted) !== undefined);
  t.pass('and logged as it came (JSON-encoded)');
  t.match(await idOf(trusted, 'x'.repeat(129)), GENERATED, '129 characters are replaced');
  t.match(await idOf(trusted, 'has space'), GENERATED, 'a space is replaced');
  t.match(await idOf(trusted, 'é'), GENERATED, 'non-ASCII is replaced');
  t.match(await idOf(untrusted, 'lb-0a1b2c'), GENERATED, 'not from a trusted proxy: replaced');
});
