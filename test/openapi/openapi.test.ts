import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import t, { type Test } from 'tap';
import { changesCsv, historicalCsv } from '../../src/features/history/history-examples.js';
import * as examples from '../../src/features/openapi/openapi-examples.js';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW, newAccount } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { githubSigner } from '../helpers/secret-scanning.js';

// Its tests share nothing and spend most of their time waiting: they run 3 at a time.
t.jobs = 3;

type Responses = Record<
  string,
  {
    description: string;
    headers?: Record<string, unknown>;
    content?: Record<string, { schema?: object; examples?: Record<string, { value: { message: string } }> }>;
  }
>;
interface Doc {
  paths: Record<string, Record<'get' | 'head', { responses: Responses }>>;
  components: { schemas: Record<string, { examples?: unknown[] }> };
}

const pointer = (...parts: string[]): string => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** Every `method path status` a document declares (`default` is no status, and so not one). */
function declared(doc: Doc): string[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).flatMap(([method, op]) =>
      Object.keys(op.responses)
        .filter((s) => s !== 'default')
        .map((s) => `${method.toUpperCase()} ${path} ${s}`),
    ),
  );
}

/**
 * Real answers, checked against the document's own schemas as the gateway serves it. `reached`
 * collects `method path status` of every answer an operation gave (a method the document has no
 * operation for is checked against the document's text instead: see the 405 test).
 */
function checker(t: Test, doc: Doc, reached: Set<string>, sent = new Set<string>()) {
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema(doc as object, 'openapi');
  return async (gw: TestGateway, path: string, init: RequestInit = {}, query = ''): Promise<number> => {
    const method = (init.method ?? 'GET').toLowerCase() as 'get' | 'head';
    // A path parameter's value comes in `query`: `/{year}` is cut to `/` and the value appended.
    const r = await gw.get(path.replace(/\/\{\w+\}$/, '/') + query, init);
    const status = String(r.status);
    const type = (r.headers.get('content-type') ?? '').split(';')[0] as string;
    const body = await r.text();
    const label = `${method.toUpperCase()} ${path}${query} → ${status} ${type}`;
    const response = doc.paths[path]?.[method]?.responses[status];
    t.ok(response, `${label}: the status is documented`);
    reached.add(`${method.toUpperCase()} ${path} ${status}`);
    const declaredHeaders = Object.keys(response?.headers ?? {}).map((h) => h.toLowerCase());
    for (const h of DOCUMENTED_HEADERS) {
      if (r.headers.has(h)) {
        t.ok(declaredHeaders.includes(h), `${label}: its ${h} header is declared`);
        sent.add(h);
      }
    }
    const refusal = method === 'get' && type === 'application/json' && JSON.parse(body).success === false;
    if (refusal) {
      // The answer's message is one of the status's examples, whose name is the error kind; the
      // description names that kind's cause.
      const { message } = JSON.parse(body) as { message: string };
      const examples = response?.content?.[type]?.examples ?? {};
      const kind = Object.keys(examples).find((k) => examples[k]?.value.message === message);
      t.ok(kind, `${label}: "${message}" is one of the status's examples`);
      const cause = CAUSE[kind ?? ''];
      if (cause) t.match(response?.description, cause, `${label}: the description names why (${kind})`);
    }
    if (method === 'head' || status === '304') {
      t.equal(body, '', `${label}: no body`);
      return r.status;
    }
    const content = response?.content?.[type];
    t.ok(content, `${label}: the content type is documented`);
    if (!content?.schema) return r.status;
    const validate = ajv.getSchema(
      `openapi#/${pointer('paths', path, method, 'responses', status, 'content', type, 'schema')}`,
    );
    const value = type === 'application/json' ? JSON.parse(body) : body;
    const ok = validate?.(value);
    t.ok(ok, `${label}: matches its schema`, { errors: validate?.errors, body: body.slice(0, 300) });
    return r.status;
  };
}

/** Headers an integration acts on: each one an answer carries must be declared for its status. */
const DOCUMENTED_HEADERS = [
  'www-authenticate',
  'x-api-key-expires',
  'retry-after',
  'etag',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit-policy',
  'ratelimit',
];

/** What a status's description must say for each key refusal it answers. */
const CAUSE: Record<string, RegExp> = {
  missing_key: /no key/i,
  invalid_key: /unknown/,
  expired_key: /expired/,
  inactive_key: /inactive/,
  key_scope: /scope/,
  key_address: /address/,
};

const S = '/fuel-api/api/simple-current.php';
const CUR = '/fuel-api/api/current.php';
const H = '/fuel-api/api/historical.php';
const C = '/fuel-api/api/changes.php';
const U = '/fuel-api/api/usage.php';
const UH = '/fuel-api/api/usage-history.php';
const DOC = '/fuel-api/openapi.json';
const FC = '/exapi/fuel/current';
const FY = '/exapi/fuel/byyear/{year}';
const fuelsaKey = (key: string, method = 'GET'): RequestInit => ({ method, headers: { key } });
const withKey = (key: string, method = 'GET'): RequestInit => ({ method, headers: { 'X-API-Key': key } });
const etagOf = async (gw: TestGateway, path: string, init: RequestInit): Promise<string> =>
  (await gw.get(path, init)).headers.get('etag') as string;

t.test(
  'every status the document declares is provoked from a real gateway, and every answer is declared',
  async (t) => {
    const reached = new Set<string>();
    const sent = new Set<string>();
    const docs: Doc[] = [];
    const docOf = async (gw: TestGateway): Promise<Doc> => {
      const doc = (await (await gw.get(DOC)).json()) as Doc & { openapi: string };
      t.equal(doc.openapi, '3.1.0');
      docs.push(doc);
      return doc;
    };

    const gw = await startGateway(
      t,
      { limits: { invalid_key_throttle: { max_attempts: 5 } } },
      { clock: new ManualClock(NOW) },
    );
    const check = checker(t, await docOf(gw), reached, sent);
    const key = gw.app.demoKeys['starter'] as string;
    const { api_key: inactive } = await newAccount(gw, { plan: 'starter', status: 'inactive' });
    const { api_key: small } = await newAccount(gw, { plan: 'starter', limit: 1 });
    const unknown = `fpg_${'C'.repeat(38)}`;

    for (const method of ['GET', 'HEAD']) {
      const auth = withKey(key, method);
      for (const path of [S, CUR]) {
        t.equal(await check(gw, path, auth), 200);
        t.equal(await check(gw, path, { method }), 401);
        t.equal(await check(gw, path, withKey(inactive, method)), 403);
        const etag = await etagOf(gw, path, withKey(key));
        t.equal(await check(gw, path, { method, headers: { 'X-API-Key': key, 'If-None-Match': etag } }), 304);
      }
      for (const q of [
        '?month=9&year=2026',
        '?from=2025-01&to=2025-12&region=inland',
        '?month=3&year=2025&format=csv',
      ]) {
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
      t.equal(await check(gw, C, auth, '?from=2025-01&to=2025-12'), 200);
      t.equal(await check(gw, C, auth, '?from=2025-01'), 400);
      t.equal(await check(gw, U, auth), 200);
      t.equal(await check(gw, UH, auth, '?from=2026-11-01&to=2026-11-23'), 200);
      t.equal(await check(gw, UH, auth, '?from=2026-11-23&to=2026-11-01'), 400);
      for (const [path, q] of [
        [H, '?month=1&year=2025'],
        [C, '?from=2025-01&to=2025-12'],
        [U, ''],
        [UH, '?from=2026-11-01&to=2026-11-23'],
      ] as const) {
        t.equal(await check(gw, path, { method }, q), 401, `${path} without a key`);
        t.equal(await check(gw, path, withKey(inactive, method), q), 403, `${path} inactive`);
      }
      // The FuelSA-compatible routes: the key in FuelSA's `key` header, or ours.
      t.equal(await check(gw, FC, fuelsaKey(key, method)), 200);
      t.equal(await check(gw, FC, auth), 200);
      t.equal(await check(gw, FC, { method }), 401);
      t.equal(await check(gw, FC, fuelsaKey(inactive, method)), 403);
      const fuelsaTag = await etagOf(gw, FC, fuelsaKey(key));
      t.equal(await check(gw, FC, { method, headers: { key, 'If-None-Match': fuelsaTag } }), 304);
      for (const year of ['2025', '1999']) t.equal(await check(gw, FY, fuelsaKey(key, method), year), 200, year);
      t.equal(await check(gw, FY, fuelsaKey(key, method), '25'), 400);
      t.equal(await check(gw, FY, fuelsaKey(key, method), '2025/01'), 404);
      t.equal(await check(gw, FY, { method }, '2025'), 401);
      t.equal(await check(gw, FY, fuelsaKey(inactive, method), '2025'), 403);
      const yearTag = await etagOf(gw, '/exapi/fuel/byyear/2025', fuelsaKey(key));
      t.equal(await check(gw, FY, { method, headers: { key, 'If-None-Match': yearTag } }, '2025'), 304);
      for (const path of [DOC, '/', '/healthz', '/readyz']) t.equal(await check(gw, path, { method }), 200);
      for (const path of [DOC, '/']) {
        const etag = await etagOf(gw, path, {});
        t.equal(await check(gw, path, { method, headers: { 'If-None-Match': etag } }), 304);
      }
    }

    // A key's own limits: expired 401, outside its allowlist or its scopes 403, on every keyed route.
    const limited = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
    const keyOf = async (body: Record<string, unknown>): Promise<string> =>
      (await adminCall(gw, 'POST', `/admin/accounts/${limited.body.account.id}/keys`, { name: 'k', ...body })).body
        .api_key;
    // A key cannot be created expired: made with an expiry, then expired by a PATCH.
    const expiring = await adminCall(gw, 'POST', `/admin/accounts/${limited.body.account.id}/keys`, {
      name: 'k',
      expires_at: new Date(NOW + 1000).toISOString(),
    });
    await adminCall(gw, 'PATCH', `/admin/accounts/${limited.body.account.id}/keys/${expiring.body.key.id}`, {
      expires_at: new Date(NOW - 1000).toISOString(),
    });
    const expired = expiring.body.api_key as string;
    // A key within the expiry warning (7 days by default): its answers carry X-API-Key-Expires.
    const soon = await keyOf({ expires_at: new Date(NOW + 2 * 86_400_000).toISOString() });
    for (const method of ['GET', 'HEAD']) {
      for (const [path, q] of [
        [S, ''],
        [CUR, ''],
        [H, '?month=1&year=2025'],
        [H, '?month=13&year=2025'],
        [C, '?from=2025-01&to=2025-12'],
        [U, ''],
        [UH, '?from=2026-11-01&to=2026-11-23'],
        [FC, ''],
        [FY, '2025'],
      ] as const) {
        await check(gw, path, withKey(soon, method), q);
      }
      const etag = await etagOf(gw, S, withKey(soon));
      t.equal(await check(gw, S, { method, headers: { 'X-API-Key': soon, 'If-None-Match': etag } }), 304);
    }
    t.ok(sent.has('x-api-key-expires'), 'answers to a key about to expire carried X-API-Key-Expires');
    t.ok(sent.has('www-authenticate'), 'a 401 carried WWW-Authenticate');
    const elsewhere = await keyOf({ allowed_cidrs: ['192.0.2.0/24'] });
    const passthroughOnly = await keyOf({ scopes: ['passthrough'] });
    for (const method of ['GET', 'HEAD']) {
      for (const [path, q] of [
        [S, ''],
        [CUR, ''],
        [H, '?month=1&year=2025'],
        [C, '?from=2025-01&to=2025-12'],
        [U, ''],
        [UH, '?from=2026-11-01&to=2026-11-23'],
        [FC, ''],
        [FY, '2025'],
      ] as const) {
        t.equal(await check(gw, path, withKey(expired, method), q), 401, `${method} ${path}: expired`);
        t.equal(await check(gw, path, withKey(elsewhere, method), q), 403, `${method} ${path}: address`);
        t.equal(await check(gw, path, withKey(passthroughOnly, method), q), 403, `${method} ${path}: scope`);
      }
    }

    // The allowance used up: every metered route answers 429, and HEAD (not counted) too.
    t.equal((await gw.get(S, withKey(small))).status, 200, 'the one request of the allowance');
    for (const method of ['GET', 'HEAD']) {
      for (const [path, q] of [
        [S, ''],
        [CUR, ''],
        [H, '?month=1&year=2025'],
        [C, '?from=2025-01&to=2025-12'],
      ] as const) {
        t.equal(await check(gw, path, withKey(small, method), q), 429, `${method} ${path}: allowance used up`);
      }
      t.equal(await check(gw, FC, fuelsaKey(small, method)), 429);
      t.equal(await check(gw, FY, fuelsaKey(small, method), '2025'), 429);
      // usage.php and usage-history.php are not counted, so a used-up allowance is still answered.
      t.equal(await check(gw, U, withKey(small, method)), 200, `${method} usage.php answers a used-up account`);
      t.equal(await check(gw, UH, withKey(small, method), '?from=2026-11-01&to=2026-11-23'), 200);
    }

    // Invalid keys from one address: the throttle answers 429 on every keyed route.
    for (let i = 0; i < 5; i++) await gw.get(U, withKey(unknown));
    for (const method of ['GET', 'HEAD']) {
      for (const [path, q] of [
        [S, ''],
        [CUR, ''],
        [H, '?month=1&year=2025'],
        [C, '?from=2025-01&to=2025-12'],
        [U, ''],
        [UH, '?from=2026-11-01&to=2026-11-23'],
      ] as const) {
        t.equal(await check(gw, path, withKey(unknown, method), q), 429, `${method} ${path}: throttled`);
      }
      t.equal(await check(gw, FC, fuelsaKey(unknown, method)), 429);
      t.equal(await check(gw, FY, fuelsaKey(unknown, method), '2025'), 429);
    }

    // Historical data and the page switched off: 501 and 404.
    const off = await startGateway(
      t,
      { prices: { historical_enabled: false }, page: { enabled: false } },
      { clock: new ManualClock(NOW) },
    );
    const offCheck = checker(t, await docOf(off), reached);
    for (const method of ['GET', 'HEAD']) {
      const offKey = withKey(off.app.demoKeys['starter'] as string, method);
      t.equal(await offCheck(off, H, offKey, '?month=1&year=2025'), 501);
      t.equal(await offCheck(off, C, offKey, '?from=2025-01&to=2025-02'), 501);
      t.equal(await offCheck(off, FY, offKey, '2025'), 501);
      t.equal(await offCheck(off, '/', { method }), 404);
    }

    // No price set in effect yet: the current endpoints and /readyz answer 503.
    const future = join(t.testdir(), 'future.json');
    const region = { petrol_93: null, petrol_95: '30.00', diesel_50ppm: null, diesel_500ppm: null };
    writeFileSync(future, JSON.stringify([{ effective_date: '2030-01-02', coastal: region, inland: region }]));
    const empty = await startGateway(t, { prices: { file: future } }, { clock: new ManualClock(NOW) });
    const emptyCheck = checker(t, await docOf(empty), reached);
    for (const method of ['GET', 'HEAD']) {
      const emptyKey = withKey(empty.app.demoKeys['starter'] as string, method);
      t.equal(await emptyCheck(empty, S, emptyKey), 503);
      t.equal(await emptyCheck(empty, CUR, emptyKey), 503);
      t.equal(await emptyCheck(empty, FC, emptyKey), 503);
      t.equal(await emptyCheck(empty, '/readyz', { method }), 503);
    }

    // The store unreachable: every keyed route answers 503.
    const redis = await startRedis(t);
    const down = await startGateway(
      t,
      { store: { type: 'redis', redis: { url: redis.url, command_timeout_ms: 300, connect_timeout_ms: 300 } } },
      { clock: new ManualClock(NOW) },
    );
    const downCheck = checker(t, await docOf(down), reached);
    const { api_key: downKey } = await newAccount(down, { plan: 'starter' });
    await redis.stop();
    for (const method of ['GET', 'HEAD']) {
      for (const [path, q] of [
        [S, ''],
        [CUR, ''],
        [H, '?month=1&year=2025'],
        [C, '?from=2025-01&to=2025-12'],
        [U, ''],
        [UH, '?from=2026-11-01&to=2026-11-23'],
      ] as const) {
        t.equal(await downCheck(down, path, withKey(downKey, method), q), 503, `${method} ${path}: store down`);
      }
      t.equal(await downCheck(down, FC, fuelsaKey(downKey, method)), 503);
      t.equal(await downCheck(down, FY, fuelsaKey(downKey, method), '2025'), 503);
    }

    const all = new Set(docs.flatMap(declared));
    for (const d of [...all].sort()) t.ok(reached.has(d), `${d}: declared, and provoked`);
    for (const r of [...reached].sort()) t.ok(all.has(r), `${r}: answered, and declared`);
  },
);

t.test('a method the document has no operation for is answered 405, as its description says', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const doc = (await (await gw.get(DOC)).json()) as Doc & { info: { description: string } };
  t.match(doc.info.description, /405 for a method the path does not answer \(GET and HEAD\)/);
  for (const path of Object.keys(doc.paths)) {
    for (const method of ['POST', 'DELETE', 'PUT']) {
      const r = await gw.get(path.replace('{year}', '2025'), { method });
      t.equal(r.status, 405, `${method} ${path}`);
      t.same(Object.keys(await r.json()), ['success', 'message']);
    }
  }
});

t.test(
  'the description names only paths the document has, and every keyed path whose GET is not counted',
  async (t) => {
    const github = githubSigner();
    for (const settings of [{}, { secret_scanning: { public_keys: [github.publicKey] } }]) {
      const gw = await startGateway(t, settings, { clock: new ManualClock(NOW) });
      const doc = (await (await gw.get(DOC)).json()) as Doc & { info: { description: string } };
      const paths = Object.keys(doc.paths);
      const { description } = doc.info;
      for (const named of description.match(/\/[\w\-./{}]*\w\/?/g) ?? []) {
        if (!named.startsWith('/fuel-api') && !named.startsWith('/exapi')) continue;
        const known = named.endsWith('/') ? paths.some((p) => p.startsWith(named)) : paths.includes(named);
        t.ok(known, `${named}, named in info.description, is in paths (${Object.keys(settings).join() || 'default'})`);
      }
      // Which keyed GETs count: a fresh account's usage after one GET of each.
      const usageOf = async (key: string): Promise<number> =>
        ((await (await gw.get(U, withKey(key))).json()) as { usage: { requests_used: number } }).usage.requests_used;
      for (const path of paths.filter((p) => p.startsWith('/fuel-api/api/'))) {
        const { api_key: key } = await newAccount(gw, { plan: 'starter' });
        const q = path === H ? '?month=1&year=2025' : path === C || path === UH ? QUERY_OF[path] : '';
        t.equal((await gw.get(path + q, withKey(key))).status, 200, `${path} answers`);
        const counted = (await usageOf(key)) === 1;
        const name = path.slice(path.lastIndexOf('/') + 1);
        // In the sentence of the exceptions: a dot within a file name does not end it.
        const excepted = new RegExp(`except(?:[^.]|\\.(?!\\s))*\\b${name.replace('.', '\\.')}`).test(description);
        t.equal(
          excepted,
          !counted,
          `${name}: ${counted ? 'counted, not named' : 'not counted, named'} as an exception`,
        );
      }
    }
  },
);

const QUERY_OF: Record<string, string> = { [C]: '?from=2025-01&to=2025-12', [UH]: '?from=2026-11-01&to=2026-11-23' };

t.test('a parameter has one type wherever it appears: year is an integer on every route', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const doc = (await (await gw.get(DOC)).json()) as {
    paths: Record<string, { get: { parameters?: Array<{ name: string; in: string; schema?: { type?: unknown } }> } }>;
  };
  const types = new Map<string, Set<string>>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const p of item.get?.parameters ?? []) {
      if (p.in === 'header') continue;
      const type = JSON.stringify(p.schema?.type ?? null);
      types.set(p.name, (types.get(p.name) ?? new Set()).add(type));
      if (p.name === 'year') t.equal(p.schema?.type, 'integer', `${path}: year is an integer`);
    }
  }
  for (const [name, set] of types) t.equal(set.size, 1, `${name}: one type (${[...set].join(', ')})`);
  const r = await gw.get('/exapi/fuel/byyear/2025', fuelsaKey(gw.app.demoKeys['business'] as string));
  t.equal(r.status, 200, 'and the gateway answers byyear/2025');
});

t.test(
  "the history routes' two media types are chosen as a generated client chooses: by Accept, or by format",
  async (t) => {
    const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
    const doc = (await (await gw.get(DOC)).json()) as Doc;
    const key = gw.app.demoKeys['starter'] as string;
    for (const [path, q] of [
      [H, '?month=3&year=2025'],
      [C, '?from=2025-01&to=2025-03'],
    ] as const) {
      const media = Object.keys(doc.paths[path]?.get.responses['200']?.content ?? {}).sort();
      t.same(media, ['application/json', 'text/csv'], `${path}: JSON and CSV, each its own media type`);
      for (const [accept, format, want] of [
        ['text/csv', '', 'text/csv'],
        ['application/json', '', 'application/json'],
        ['text/csv;q=0.5, application/json', '', 'application/json'],
        ['application/json;q=0.1, text/csv', '', 'text/csv'],
        ['*/*', '', 'application/json'],
        ['application/json', '&format=csv', 'text/csv'],
        ['text/csv', '&format=json', 'application/json'],
      ] as const) {
        const r = await gw.get(path + q + format, { headers: { 'X-API-Key': key, Accept: accept } });
        const type = (r.headers.get('content-type') ?? '').split(';')[0];
        t.equal(type, want, `${path}${format} with Accept: ${accept}`);
        const body = await r.text();
        if (want === 'text/csv') t.notOk(body.startsWith('{'), 'and the body is CSV');
        else t.equal(JSON.parse(body).success, true, 'and the body is JSON');
      }
    }
  },
);

t.test('month and year are integers, as a typed client sends them', async (t) => {
  const gw = await startGateway(t, {}, { clock: new ManualClock(NOW) });
  const doc = (await (await gw.get(DOC)).json()) as {
    paths: Record<string, { get: { parameters: Array<{ name: string; schema: Record<string, unknown> }> } }>;
  };
  const params = doc.paths[H]?.get.parameters ?? [];
  const ajv = new Ajv2020({ strict: false });
  for (const [name, value] of [
    ['month', 5],
    ['year', 2025],
  ] as const) {
    const schema = params.find((p) => p.name === name)?.schema ?? {};
    t.equal(schema['type'], 'integer', `${name} is an integer`);
    t.ok(ajv.validate(schema, value), `${name}=${value} is valid`);
  }
  const r = await gw.get(`${H}?month=5&year=2025`, withKey(gw.app.demoKeys['starter'] as string));
  t.equal(r.status, 200, 'and the gateway answers month=5&year=2025');
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
    ['/fuel-api/api/usage.php', { success: true, usage: examples.usage, key: examples.usageKey }],
    ['/readyz', examples.ready],
  ];
  for (const [path, example] of cases) {
    const r = await gw.get(path, { headers: { 'X-API-Key': key } });
    const body = await r.text();
    if (typeof example === 'string') {
      t.equal(body, example, path);
      continue;
    }
    const real = JSON.parse(body) as { usage?: Record<string, unknown>; key?: { id: string } };
    // Every key has its own id.
    if (real.key && 'key' in example) real.key.id = examples.usageKey.id;
    // The count moves with every request; everything else must be the example exactly, key order too.
    if (real.usage && 'usage' in example) real.usage = { ...real.usage, requests_used: 1, requests_remaining: 99 };
    t.equal(JSON.stringify(real), JSON.stringify(example), path);
  }
});
