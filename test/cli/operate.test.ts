import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { gatewayProcess, runCli, spawnCli, storeTimeouts } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor as waitUntil } from '../helpers/wait.js';

const waitFor = (cond: () => Promise<boolean>, ms = 3000) => waitUntil('the running gateway', cond, ms);

const dir = tempDir('fpg-cli-');
const write = (name: string, data: unknown): string => {
  const p = join(dir, name);
  writeFileSync(p, typeof data === 'string' ? data : JSON.stringify(data));
  return p;
};
const region = (p95: string) => ({ petrol_93: null, petrol_95: p95, diesel_50ppm: '27.00', diesel_500ppm: '26.90' });
const SIMPLE = '/fuel-api/api/simple-current.php';

t.test('accounts and prices commands run the admin operations against the shared store', async (t) => {
  const redis = await startRedis(t);
  const config = write('redis.yaml', {
    store: { type: 'redis', redis: { url: redis.url, ...storeTimeouts() } },
    log: { access: false },
  });
  const cli = async (...args: string[]) => {
    const r = await runCli([...args, '--config', config]);
    return { ...r, json: r.code === 0 ? (JSON.parse(r.stdout) as any) : null };
  };
  const gw = await gatewayProcess(t, config);

  const created = await cli('accounts', 'create', '--plan', 'starter', '--label', 'Acme Fleet', '--limit', '3');
  t.equal(created.code, 0, created.stderr);
  t.match(created.json, {
    account: { plan: 'starter', label: 'Acme Fleet', limit: 3, status: 'active' },
    api_key: /^fpg_/,
  });
  const id = created.json.account.id as string;
  const key = created.json.api_key as string;
  t.equal(
    (await fetch(`${gw.base}${SIMPLE}?api_key=${key}`)).status,
    200,
    'a key made by the CLI works on a running gateway',
  );

  const [shown, planned] = await Promise.all([
    cli('accounts', 'show', id),
    cli('accounts', 'set-plan', id, 'business'),
  ]);
  t.equal(shown.code, 0, shown.stderr);
  t.equal(planned.json.account.plan, 'business');
  const after = await cli('accounts', 'show', id);
  t.match(
    after.json.usage,
    { plan_type: 'business', requests_used: 1, request_limit: 10000, request_period: 'monthly' },
    'the plan change dropped the own limit of 3: the business allowance',
  );
  const enterprise = await cli('accounts', 'set-plan', id, 'enterprise');
  t.equal(enterprise.code, 1, 'enterprise without --limit is refused');
  t.match(enterprise.stderr, /^BAD_REQUEST: limit: plan "enterprise" has no default limit; give one$/m);
  const limited = await cli('accounts', 'set-plan', id, 'enterprise', '--limit', '1000000');
  t.match(limited.json?.account, { plan: 'enterprise', limit: 1_000_000 }, limited.stderr);
  const down = await cli('accounts', 'set-plan', id, 'business');
  t.match(down.json?.account, { plan: 'business', limit: null }, 'the downgrade keeps no enterprise allowance');

  const disabled = await cli('accounts', 'disable', id);
  t.equal(disabled.json.account.status, 'inactive');
  await waitFor(async () => (await fetch(`${gw.base}${SIMPLE}?api_key=${key}`)).status === 403);
  t.equal((await cli('accounts', 'enable', id)).json.account.status, 'active');
  const rotated = await cli('accounts', 'rotate-key', id);
  t.not(rotated.json.api_key, key);
  await waitFor(async () => (await fetch(`${gw.base}${SIMPLE}?api_key=${rotated.json.api_key}`)).status === 200);
  t.equal((await fetch(`${gw.base}${SIMPLE}?api_key=${key}`)).status, 401, 'the old key is refused');

  const future = write('future.json', {
    effective_date: '2031-01-01',
    coastal: region('30.00'),
    inland: region('30.50'),
  });
  const past = write('past.json', {
    effective_date: '2026-10-07',
    source: 'DMPR',
    coastal: region('25.10'),
    inland: region('25.60'),
  });
  const [pubFuture, pubPast] = await Promise.all([cli('prices', 'publish', future), cli('prices', 'publish', past)]);
  t.equal(pubFuture.json.status, 'scheduled', pubFuture.stderr);
  t.ok(['current', 'scheduled'].includes(pubPast.json.status));
  const [show, history] = await Promise.all([cli('prices', 'show'), cli('prices', 'history')]);
  t.equal(show.json.current.effective_date, '2026-10-07');
  t.same(
    show.json.scheduled.map((s: { effective_date: string }) => s.effective_date),
    ['2031-01-01'],
  );
  t.equal(history.json.history.length, 178, 'the shipped 177 (2012-2026) plus the published one');
  await waitFor(
    async () =>
      (
        (await (await fetch(`${gw.base}${SIMPLE}?api_key=${rotated.json.api_key}`)).json()) as {
          effective_date: string;
        }
      ).effective_date === '2026-10-07',
  );
  t.pass('the running gateway serves the published set');
});

t.test('CLI errors go to stderr with a non-zero exit and change nothing', async (t) => {
  const redis = await startRedis(t);
  // Ten CLIs start at once: on a loaded machine one took longer than the 500 ms command timeout
  // and failed for that instead of the error under test. Timeouts are not what this test is about.
  const config = write('redis-errors.yaml', {
    store: { type: 'redis', redis: { url: redis.url, command_timeout_ms: 10_000, connect_timeout_ms: 10_000 } },
  });
  const bad = write('bad-set.json', {
    effective_date: '2026-11-04',
    coastal: { ...region('2'), petrol_93: 21 },
    inland: region('25.60'),
  });
  const cases: Array<[string[], RegExp]> = [
    [['accounts', 'show', 'acct_missing'], /NOT_FOUND: no account with id acct_missing/],
    [['accounts', 'disable', 'acct_missing'], /NOT_FOUND/],
    [['accounts', 'create', '--plan', 'gold'], /BAD_REQUEST: plan: unknown plan "gold"/],
    [['accounts', 'create', '--plan', 'starter', '--limit', 'lots'], /BAD_REQUEST: limit: /],
    [['accounts', 'create'], /BAD_REQUEST: plan: /],
    [['accounts', 'show'], /missing account id/],
    [['prices', 'publish', bad], /PRICE_SET_INVALID: .*coastal\.petrol_95: expected a price/],
    [['prices', 'publish', bad], /coastal\.petrol_93: expected a price/],
    [['prices', 'publish', join(dir, 'nope.json')], /nope\.json: ENOENT/],
  ];
  const results = await Promise.all(cases.map(([args]) => runCli([...args, '--config', config])));
  results.forEach((r, i) => {
    const [args, re] = cases[i] as [string[], RegExp];
    t.equal(r.code, 1, args.join(' '));
    t.match(r.stderr, re, args.join(' '));
    t.equal(r.stdout, '');
  });
  // The binary itself: exit 0, the answer on stdout.
  const history = await spawnCli(['prices', 'history', '--config', config]);
  t.equal(history.code, 0, history.stderr);
  t.same(
    JSON.parse(history.stdout),
    { history: [] },
    'the refused set was not stored (and the CLI does not seed: gateways do)',
  );
});

t.test('with the memory store the CLI explains where accounts live: the binary exits 1', async (t) => {
  const r = await spawnCli(['accounts', 'create', '--plan', 'starter']);
  t.equal(r.code, 1);
  t.match(r.stderr, /embedded memory store/);
  t.match(r.stderr, /admin API/);
  t.match(r.stderr, /REDIS_URL/);
});
