import t from 'tap';
import { adminCall } from '../helpers/admin.js';
import { ManualClock } from '../helpers/clock.js';
import { NOW } from '../helpers/fixtures.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64url');

async function withAccounts(
  t: Parameters<typeof startGateway>[0],
): Promise<{ gw: TestGateway; made: Array<{ id: string; key: string; label: string }> }> {
  const gw = await startGateway(t, { demo_accounts: false }, { clock: new ManualClock(NOW) });
  const made = [];
  for (const [plan, label, status] of [
    ['starter', 'Acme Fleet', 'active'],
    ['starter', 'acme (retail)', 'inactive'],
    ['business', 'A.C.M.E.', 'active'],
    ['starter', 'Beta Logistics', 'active'],
    ['starter', 'ACMEX', 'active'],
  ] as const) {
    const r = await adminCall(gw, 'POST', '/admin/accounts', { plan, label, status });
    made.push({ id: r.body.account.id as string, key: r.body.api_key as string, label });
  }
  return { gw, made };
}

const labels = (body: { accounts: Array<{ label: string }> }): string[] => body.accounts.map((a) => a.label).sort();

t.test('GET /admin/accounts filters by status, plan and label and never shows a key or its hash', async (t) => {
  const { gw, made } = await withAccounts(t);
  const all = await adminCall(gw, 'GET', '/admin/accounts');
  t.equal(all.status, 200);
  t.equal(all.body.accounts.length, 5);
  t.equal(all.body.next_cursor, null);
  t.same(
    all.body.accounts.map((a: { id: string }) => a.id),
    made.map((m) => m.id).sort(),
    'in id order',
  );
  t.match(all.body.accounts[0], { id: /^acct_/, plan: String, status: String, label: String, revision: 1 });
  const text = JSON.stringify(all.body);
  t.notMatch(text, /key_hash|api_key|fpg_/, 'no key, no hash');
  for (const m of made) t.notOk(text.includes(m.key.slice(4, 20)));

  t.same(labels((await adminCall(gw, 'GET', '/admin/accounts?status=inactive')).body), ['acme (retail)']);
  t.same(labels((await adminCall(gw, 'GET', '/admin/accounts?status=active&plan=starter')).body), [
    'ACMEX',
    'Acme Fleet',
    'Beta Logistics',
  ]);
  t.same(
    labels((await adminCall(gw, 'GET', '/admin/accounts?label=acme')).body),
    ['ACMEX', 'Acme Fleet', 'acme (retail)'],
    'contains, any case',
  );
  t.same(
    labels((await adminCall(gw, 'GET', `/admin/accounts?label=${encodeURIComponent('.')}`)).body),
    ['A.C.M.E.'],
    'a dot is literal',
  );
  t.same(labels((await adminCall(gw, 'GET', `/admin/accounts?label=${encodeURIComponent('(retail)')}`)).body), [
    'acme (retail)',
  ]);
  t.same(
    labels((await adminCall(gw, 'GET', `/admin/accounts?label=${encodeURIComponent('.*')}`)).body),
    [],
    'never a pattern',
  );
  t.same(
    labels((await adminCall(gw, 'GET', `/admin/accounts?label=${encodeURIComponent('a[')}`)).body),
    [],
    'an unbalanced bracket is just text',
  );
  t.same((await adminCall(gw, 'GET', '/admin/accounts?plan=gold')).body, { accounts: [], next_cursor: null });
});

t.test('pages: limit and next_cursor visit every match once; a cursor is opaque and checked', async (t) => {
  const { gw, made } = await withAccounts(t);
  const seen: string[] = [];
  let path = '/admin/accounts?plan=starter&limit=2';
  for (let i = 0; i < 5; i++) {
    const page = await adminCall(gw, 'GET', path);
    t.equal(page.status, 200);
    t.ok(page.body.accounts.length <= 2);
    seen.push(...page.body.accounts.map((a: { id: string }) => a.id));
    if (page.body.next_cursor === null) break;
    t.match(page.body.next_cursor, /^[A-Za-z0-9_-]+$/, 'URL-safe as it is');
    path = `/admin/accounts?plan=starter&limit=2&cursor=${page.body.next_cursor}`;
  }
  t.same(
    seen,
    made
      .filter((_, i) => i !== 2)
      .map((m) => m.id)
      .sort(),
    'every starter once, in order',
  );

  // A well-formed cursor naming any id just continues after it: nothing a full listing would not show.
  const after = await adminCall(gw, 'GET', `/admin/accounts?cursor=${b64('acct_')}`);
  t.equal(after.body.accounts.length, 5);
  t.equal((await adminCall(gw, 'GET', `/admin/accounts?cursor=${b64('zzz')}`)).body.accounts.length, 0);
});

t.test('a bad listing query is a 400 naming the parameter, and nothing is listed', async (t) => {
  const { gw } = await withAccounts(t);
  const cases: Array<[string, RegExp]> = [
    ['status=gone', /^status: /],
    ['plan=', /^plan: /],
    ['label=', /^label: /],
    ['limit=0', /^limit: expected a whole number from 1 to 500/],
    ['limit=501', /^limit: expected a whole number from 1 to 500/],
    ['limit=abc', /^limit: expected a whole number/],
    ['limit=-1', /^limit: /],
    ['limit=1.5', /^limit: /],
    ['cursor=not%20base64', /^cursor: not a cursor this API gave/],
    [`cursor=${b64('acct_1')}=`, /^cursor: /],
    [`cursor=${b64('acct 1; DROP')}`, /^cursor: /],
    [`cursor=${b64('a'.repeat(129))}`, /^cursor: /],
    ['cursor=', /^cursor: /],
    ['colour=red', /colour/],
    ['status=active&status=inactive', /^status: /],
  ];
  for (const [query, re] of cases) {
    const r = await adminCall(gw, 'GET', `/admin/accounts?${query}`);
    t.equal(r.status, 400, query);
    t.equal(r.body.code, 'BAD_REQUEST', query);
    t.match(r.body.message, re, query);
    t.notOk('accounts' in r.body, query);
  }
});
