import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import t, { type Test } from 'tap';
import { changesCsv, historicalCsv } from '../../src/features/history/examples.js';
import * as examples from '../../src/features/openapi/examples.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

interface Doc {
  paths: Record<string, { get: { responses: Record<string, { content?: Record<string, { schema?: object }> }> } }>;
  components: { schemas: Record<string, { examples?: unknown[] }> };
}

const pointer = (...parts: string[]): string => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** Real answers, checked against the document's own schemas as the gateway serves it. */
function checker(t: Test, doc: Doc) {
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema(doc as object, 'openapi');
  const seen = new Set<string>();
  return {
    seen,
    /** `query`: the rest of the request target (a query, or a path parameter's value); `path` is the document's. */
    async check(gw: TestGateway, path: string, init: RequestInit = {}, query = ''): Promise<number> {
      const r = await gw.get(path.replace(/\/\{\w+\}$/, '/') + query, init);
      const status = String(r.status);
      const type = (r.headers.get('content-type') ?? '').split(';')[0] as string;
      const body = await r.text();
      const label = `${init.method ?? 'GET'} ${path}${query} → ${status} ${type}`;
      const response = doc.paths[path]?.get.responses[status];
      t.ok(response, `${label}: the status is documented`);
      const content = response?.content?.[type];
      t.ok(content, `${label}: the content type is documented`);
      seen.add(`${path} ${status}`);
      if (!content?.schema) return r.status;
      const validate = ajv.getSchema(
        `openapi#/${pointer('paths', path, 'get', 'responses', status, 'content', type, 'schema')}`,
      );
      const value = type === 'application/json' ? JSON.parse(body) : body;
      const ok = validate?.(value);
      t.ok(ok, `${label}: matches its schema`, { errors: validate?.errors, body: body.slice(0, 300) });
      return r.status;
    },
  };
}

t.test('real answers of every public endpoint, success and error, match the OpenAPI document', async (t) => {
  const gw = await startGateway(
    t,
    { limits: { invalid_key_throttle: { max_attempts: 5 } } },
    { clock: new ManualClock(NOW) },
  );
  const r = await gw.get('/fuel-api/openapi.json');
  t.equal(r.status, 200);
  const doc = (await r.json()) as Doc & { openapi: string };
  t.equal(doc.openapi, '3.1.0');
  const { check, seen } = checker(t, doc);
  const key = gw.app.demoKeys['starter'] as string;
  const auth = { headers: { 'X-API-Key': key } };
  const { api_key: inactive } = await newAccount(gw, { plan: 'starter', status: 'inactive' });
  const { api_key: small } = await newAccount(gw, { plan: 'starter', limit: 1 });

  for (const path of ['/fuel-api/api/simple-current.php', '/fuel-api/api/current.php']) {
    t.equal(await check(gw, path, auth), 200);
    t.equal(await check(gw, path), 401);
    t.equal(await check(gw, path, { headers: { 'X-API-Key': inactive } }), 403);
    t.equal(await check(gw, path, { method: 'DELETE' }), 405);
  }
  await check(gw, '/fuel-api/api/simple-current.php', { headers: { 'X-API-Key': small } });
  t.equal(await check(gw, '/fuel-api/api/current.php', { headers: { 'X-API-Key': small } }), 429, 'limit reached');

  const H = '/fuel-api/api/historical.php';
  for (const q of ['?month=9&year=2026', '?from=2025-01&to=2025-12&region=inland', '?month=3&year=2025&format=csv']) {
    t.equal(await check(gw, H, auth, q), 200, q);
  }
  for (const q of [
    '?month=13&year=2025',
    '?month=1&year=25',
    '?from=2025-02&to=2025-01',
    '?month=1&year=2025&region=x',
  ]) {
    t.equal(await check(gw, H, auth, q), 400, q);
  }
  t.equal(await check(gw, H, auth, '?month=1&year=2025&format=xml'), 400);
  const C = '/fuel-api/api/changes.php';
  t.equal(await check(gw, C, auth, '?from=2025-01&to=2025-12'), 200);
  t.equal(await check(gw, C, auth, '?from=2025-01'), 400);
  t.equal(await check(gw, C, { headers: { 'X-API-Key': inactive } }, '?from=2025-01&to=2025-12'), 403);

  const FC = '/exapi/fuel/current';
  t.equal(await check(gw, FC, { headers: { key } }), 200);
  t.equal(await check(gw, FC, auth, `?api_key=${key}`), 200);
  t.equal(await check(gw, FC), 401);
  t.equal(await check(gw, FC, { headers: { key: inactive } }), 403);
  t.equal(await check(gw, FC, { method: 'DELETE' }), 405);
  const FY = '/exapi/fuel/byyear/{year}';
  for (const year of ['2025', '1999']) t.equal(await check(gw, FY, { headers: { key } }, year), 200, year);
  t.equal(await check(gw, FY, { headers: { key } }, '25'), 400);
  t.equal(await check(gw, FY, { headers: { key } }, '2025/01'), 404);
  t.equal(await check(gw, FY, { headers: { key: small } }, '2025'), 429);

  const U = '/fuel-api/api/usage.php';
  t.equal(await check(gw, U, auth), 200);
  t.equal(await check(gw, U, { headers: { 'X-API-Key': inactive } }), 403);
  t.equal(await check(gw, U, { method: 'POST' }), 405);
  for (let i = 0; i < 5; i++) await check(gw, U, { headers: { 'X-API-Key': `fpg_${'C'.repeat(38)}` } });
  t.equal(await check(gw, U, { headers: { 'X-API-Key': 'not-a-key' } }), 429, 'throttled');

  const UH = '/fuel-api/api/usage-history.php';
  t.equal(await check(gw, UH, auth, '?from=2026-11-01&to=2026-11-23'), 200);
  t.equal(await check(gw, UH, auth, '?from=2026-11-23&to=2026-11-01'), 400);
  t.equal(await check(gw, UH, { headers: { 'X-API-Key': inactive } }, '?from=2026-11-01&to=2026-11-23'), 403);

  t.equal(await check(gw, '/fuel-api/openapi.json'), 200);
  t.equal(await check(gw, '/healthz'), 200);
  t.equal(await check(gw, '/readyz'), 200);
  t.equal(await check(gw, '/'), 200);

  const off = await startGateway(
    t,
    { prices: { historical_enabled: false }, page: { enabled: false } },
    { clock: new ManualClock(NOW) },
  );
  const offKey = { headers: { 'X-API-Key': off.app.demoKeys['starter'] as string } };
  const offDoc = (await (await off.get('/fuel-api/openapi.json')).json()) as Doc;
  const offCheck = checker(t, offDoc);
  t.equal(await offCheck.check(off, H, offKey, '?month=1&year=2025'), 501);
  t.equal(await offCheck.check(off, C, offKey, '?from=2025-01&to=2025-02'), 501);
  t.equal(await offCheck.check(off, '/exapi/fuel/byyear/{year}', offKey, '2025'), 501);
  t.equal(await offCheck.check(off, '/'), 404);

  // No price set in effect yet: the current endpoints and /readyz answer 503.
  const dir = mkdtempSync(join(tmpdir(), 'fpg-openapi-'));
  const future = join(dir, 'future.json');
  const region = { petrol_93: null, petrol_95: '30.00', diesel_50ppm: null, diesel_500ppm: null };
  writeFileSync(future, JSON.stringify([{ effective_date: '2030-01-02', coastal: region, inland: region }]));
  const empty = await startGateway(t, { prices: { file: future } }, { clock: new ManualClock(NOW) });
  const emptyKey = { headers: { 'X-API-Key': empty.app.demoKeys['starter'] as string } };
  const emptyCheck = checker(t, (await (await empty.get('/fuel-api/openapi.json')).json()) as Doc);
  t.equal(await emptyCheck.check(empty, '/fuel-api/api/simple-current.php', emptyKey), 503);
  t.equal(await emptyCheck.check(empty, '/exapi/fuel/current', emptyKey), 503);
  t.equal(await emptyCheck.check(empty, '/readyz'), 503);

  for (const s of [...offCheck.seen, ...emptyCheck.seen]) seen.add(s);
  for (const path of Object.keys(doc.paths)) {
    t.ok(
      [...seen].some((s) => s.startsWith(`${path} 200`)),
      `${path}: a success was checked`,
    );
    if (path !== '/fuel-api/openapi.json' && path !== '/healthz') {
      t.ok(
        [...seen].some((s) => s.startsWith(`${path} `) && !s.endsWith(' 200')),
        `${path}: an error was checked`,
      );
    }
  }
});

t.test("the document's examples match its schemas", async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const doc = (await (await gw.get('/fuel-api/openapi.json')).json()) as Doc;
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema(doc as object, 'openapi');
  let count = 0;
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    for (const example of schema.examples ?? []) {
      if (typeof example !== 'object' || example === null) continue;
      const validate = ajv.getSchema(`openapi#/components/schemas/${name}`);
      t.ok(validate?.(example), `${name} example`, { errors: validate?.errors });
      count++;
    }
  }
  t.ok(count >= 7, `${count} examples checked`);
  const errorSchema = ajv.getSchema('openapi#/components/schemas/Error');
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [status, response] of Object.entries(item.get.responses)) {
      const examples = (response.content?.['application/json'] as { examples?: Record<string, { value: unknown }> })
        ?.examples;
      for (const [kind, ex] of Object.entries(examples ?? {})) {
        t.ok(errorSchema?.(ex.value), `${path} ${status} ${kind}`);
      }
    }
  }
});

t.test("the document's examples are the real answers of a gateway on 20 May 2025", async (t) => {
  const at = Date.parse('2025-05-20T09:30:00+02:00');
  const gw = await startGateway(t, {}, { clock: new ManualClock(at) });
  const { api_key: key } = await newAccount(gw, { plan: 'developer' }, at);
  const cases: Array<[string, object | string]> = [
    ['/fuel-api/api/simple-current.php', examples.simpleCurrent],
    ['/fuel-api/api/current.php', examples.current],
    ['/fuel-api/api/historical.php?month=5&year=2025', examples.historicalMonth],
    ['/fuel-api/api/historical.php?from=2025-04&to=2025-05&region=inland', examples.historicalRange],
    ['/fuel-api/api/historical.php?month=5&year=2025&region=inland&format=csv', historicalCsv],
    ['/fuel-api/api/changes.php?from=2025-04&to=2025-05', examples.changes],
    ['/fuel-api/api/changes.php?from=2025-05&to=2025-05&region=inland&format=csv', changesCsv],
    ['/fuel-api/api/usage.php', { success: true, usage: examples.usage }],
    ['/exapi/fuel/current', examples.fuelsaCurrent],
    ['/readyz', examples.ready],
  ];
  for (const [path, example] of cases) {
    const r = await gw.get(path, { headers: { 'X-API-Key': key } });
    const body = await r.text();
    if (typeof example === 'string') {
      t.equal(body, example, path);
      continue;
    }
    const real = JSON.parse(body) as { usage?: Record<string, unknown> };
    // The count moves with every request; everything else must be the example exactly, key order too.
    if (real.usage && 'usage' in example) real.usage = { ...real.usage, requests_used: 1, requests_remaining: 99 };
    t.equal(JSON.stringify(real), JSON.stringify(example), path);
  }
});
