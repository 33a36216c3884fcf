import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { gatewayProcess, runCli, storeTimeouts } from '../helpers/cli.js';
import { startRedis } from '../helpers/redis.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor as waitUntil } from '../helpers/wait.js';

const dir = tempDir('fpg-cli-undo-');
const write = (name: string, data: unknown): string => {
  const p = join(dir, name);
  writeFileSync(p, JSON.stringify(data));
  return p;
};
const region = (p95: string) => ({ petrol_93: null, petrol_95: p95, diesel_50ppm: '27.00', diesel_500ppm: '26.90' });
const SIMPLE = '/fuel-api/api/simple-current.php';
const waitFor = (cond: () => Promise<boolean>, ms = 3000) => waitUntil('the running gateway', cond, ms);

/** The audit entries among the CLI's stderr lines. */
const audits = (stderr: string): Array<Record<string, unknown>> =>
  stderr
    .split('\n')
    .filter((l) => l.includes('"audit"'))
    .map((l) => (JSON.parse(l) as { audit: Record<string, unknown> }).audit);

t.test('accounts list and delete, prices cancel and publishing the shipped history, from the CLI', async (t) => {
  const redis = await startRedis(t);
  const config = write('redis-undo.yaml', {
    store: { type: 'redis', redis: { url: redis.url, ...storeTimeouts() } },
    log: { access: false },
  });
  const cli = async (...args: string[]) => {
    const r = await runCli([...args, '--config', config]);
    return { ...r, json: r.code === 0 ? (JSON.parse(r.stdout) as any) : null };
  };
  const gw = await gatewayProcess(t, config);
  const [acme, beta] = await Promise.all([
    cli('accounts', 'create', '--plan', 'starter', '--label', 'Acme.Fleet'),
    cli('accounts', 'create', '--plan', 'business', '--label', 'Beta'),
  ]);
  t.equal(acme.code, 0, acme.stderr);
  const id = acme.json.account.id as string;
  const key = acme.json.api_key as string;
  t.match(
    audits(acme.stderr),
    [{ action: 'account.create', from: 'cli', account_id: id }],
    'one audit line, on stderr, from "cli"',
  );
  t.notOk(acme.stderr.includes(key.slice(4, 20)), 'never the key');
  t.equal((await fetch(`${gw.base}${SIMPLE}?api_key=${key}`)).status, 200, 'cached by the running gateway');

  const [listed, filtered, paged, none] = await Promise.all([
    cli('accounts', 'list'),
    cli('accounts', 'list', '--label', 'acme.', '--status', 'active', '--plan', 'starter'),
    cli('accounts', 'list', '--limit', '1'),
    cli('accounts', 'list', '--label', 'a.*'),
  ]);
  t.equal(listed.code, 0, listed.stderr);
  t.same(
    listed.json.accounts.map((a: { id: string }) => a.id),
    [id, beta.json.account.id].sort(),
  );
  t.notMatch(listed.stdout, /key_hash|fpg_/, 'no key, no hash');
  t.same(
    filtered.json.accounts.map((a: { id: string }) => a.id),
    [id],
  );
  t.equal(paged.json.accounts.length, 1);
  const rest = await cli('accounts', 'list', '--limit', '1', '--cursor', paged.json.next_cursor);
  t.equal(rest.json.accounts.length, 1);
  t.not(rest.json.accounts[0].id, paged.json.accounts[0].id, 'the cursor continues');
  t.equal(rest.json.next_cursor, null);
  t.same(none.json.accounts, []);

  const deleted = await cli('accounts', 'delete', id);
  t.equal(deleted.code, 0, deleted.stderr);
  const start = Date.now();
  await waitFor(async () => (await fetch(`${gw.base}${SIMPLE}?api_key=${key}`)).status === 401, 1000);
  t.ok(Date.now() - start < 1000, `the running gateway refuses the key within a second (${Date.now() - start} ms)`);
  const again = await cli('accounts', 'delete', id);
  t.equal(again.code, 1);
  t.match(again.stderr, /NOT_FOUND: no account with id/);

  const history = await cli('prices', 'publish', 'data/prices/sa-fuel-prices-2023-2026.json');
  t.equal(history.code, 0, history.stderr);
  t.equal(history.json.published.length, 45);
  t.same(history.json.published.at(-1), { effective_date: '2026-09-02', status: 'current' });
  t.equal((audits(history.stderr)[0]?.effective_dates as string[] | undefined)?.length, 45);
  const future = write('cancel-me.json', {
    effective_date: '2031-01-01',
    coastal: region('30.00'),
    inland: region('30.50'),
  });
  t.equal((await cli('prices', 'publish', future)).json.status, 'scheduled');
  await waitFor(
    async () =>
      ((await (await fetch(`${gw.admin}/admin/prices`)).json()) as { scheduled: unknown[] }).scheduled.length === 1,
  );
  const cancelled = await cli('prices', 'cancel', '2031-01-01');
  t.equal(cancelled.code, 0, cancelled.stderr);
  t.equal(cancelled.json.price_set.effective_date, '2031-01-01');
  t.same(audits(cancelled.stderr), [{ action: 'prices.cancel', effective_date: '2031-01-01', from: 'cli' }]);
  await waitFor(
    async () =>
      ((await (await fetch(`${gw.admin}/admin/prices`)).json()) as { scheduled: unknown[] }).scheduled.length === 0,
    1000,
  );
  t.pass('the running gateway dropped the cancelled set within a second');
});
