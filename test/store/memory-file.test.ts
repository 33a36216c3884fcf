import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type GatewayProcess, gatewayProcess, serve } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { waitFor } from '../helpers/wait.js';

// Its tests share nothing and spend most of their time waiting: they run 3 at a time.
t.jobs = 3;

const SIMPLE = '/fuel-api/api/simple-current.php';

/** A config whose memory store keeps its state in a fresh folder; returns the config and the state file. */
function setup(): { config: string; state: string } {
  const dir = tempDir('fpg-persist-');
  const config = join(dir, 'gateway.yaml');
  writeFileSync(
    config,
    JSON.stringify({ store: { memory: { file: 'state/store.json' } }, demo_accounts: false, log: { access: false } }),
  );
  return { config, state: join(dir, 'state/store.json') };
}

async function createKey(gw: GatewayProcess, plan = 'starter'): Promise<{ id: string; key: string }> {
  const r = await fetch(`${gw.admin}/admin/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ plan }),
  });
  const body = (await r.json()) as { account: { id: string }; api_key: string };
  return { id: body.account.id, key: body.api_key };
}

async function used(gw: GatewayProcess, key: string): Promise<{ status: number; used?: number }> {
  const r = await fetch(`${gw.base}${SIMPLE}?api_key=${key}`);
  const body = (await r.json()) as { usage?: { requests_used: number } };
  return { status: r.status, used: body.usage?.requests_used };
}

/** The account's count in the state file (0 before the file or the counter is there). */
function onDisk(state: string, id: string): number {
  if (!existsSync(state)) return 0;
  const { counters } = JSON.parse(readFileSync(state, 'utf8')) as {
    counters: Array<{ account: string; used: number }>;
  };
  return counters.filter((c) => c.account === id).reduce((n, c) => n + c.used, 0);
}

async function requests(t: Test, gw: GatewayProcess, key: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) t.equal((await used(gw, key)).status, 200);
}

t.test('accounts, published prices and counts survive a restart of the real process', async (t) => {
  const { config, state } = setup();
  const first = await gatewayProcess(t, config);
  const { key } = await createKey(first);
  await requests(t, first, key, 3);
  const set = JSON.parse(readFileSync('data/prices/sa-fuel-prices-2023-2026.json', 'utf8'))[44];
  const published = await fetch(`${first.admin}/admin/prices`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...set, effective_date: '2031-01-08', source: 'Scheduled by the test' }),
  });
  t.equal(published.status, 201);
  const { id } = await createKey(first);
  const keys = (await (await fetch(`${first.admin}/admin/accounts/${id}/keys`)).json()) as { keys: [{ id: string }] };
  const rotate = `${first.admin}/admin/accounts/${id}/keys/${keys.keys[0].id}/rotate`;
  const rotated = (await (await fetch(rotate, { method: 'POST' })).json()) as { key: { id: string } };
  t.equal(await first.stop('SIGTERM'), 0);
  t.ok(existsSync(state), 'the state file exists');

  const second = await gatewayProcess(t, config);
  t.same(await used(second, key), { status: 200, used: 4 }, 'the key works and its count went on');
  const prices = (await (await fetch(`${second.admin}/admin/prices`)).json()) as {
    scheduled: Array<{ effective_date: string }>;
  };
  t.ok(
    prices.scheduled.some((s) => s.effective_date === '2031-01-08'),
    'the scheduled set is still there',
  );
  const again = await fetch(rotate.replace(first.admin, second.admin), { method: 'POST' });
  t.equal(again.status, 409, 'a rotated key is still known to be rotated');
  t.equal(((await again.json()) as { successor_key_id: string }).successor_key_id, rotated.key.id);
  t.equal(await second.stop('SIGTERM'), 0);
});

t.test('a crash loses at most the last second of counts', async (t) => {
  const { config, state } = setup();
  const first = await gatewayProcess(t, config);
  const { id, key } = await createKey(first);
  await requests(t, first, key, 5);
  // The store's flush timer (a second) writes the counts: wait until the file holds them, within a bound.
  await waitFor('the counts to reach the file', () => onDisk(state, id) === 5, 1300);
  first.child.kill('SIGKILL');
  await new Promise((r) => first.child.once('exit', r));
  const second = await gatewayProcess(t, config);
  t.same(await used(second, key), { status: 200, used: 6 }, 'the counts of more than a second ago were on disk');
  await second.stop('SIGTERM');
});

t.test('a corrupt or torn file stops the start with a clear error and is left untouched', async (t) => {
  for (const [what, content] of [
    ['garbage', 'this is not json'],
    ['a torn (truncated) write', '{"version":1,"accounts":[{"id":"acct_1","sta'],
    ['a wrong shape', '{"version":1,"accounts":[{"id":"acct_1"}],"prices":[],"counters":[]}'],
  ] as const) {
    const { config, state } = setup();
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(state, '..'), { recursive: true });
    writeFileSync(state, content);
    const gw = serve(t, ['--config', config], { FUEL_GATEWAY_CONFIG: '' });
    t.equal(await new Promise((r) => gw.child.on('exit', r)), 1, `${what}: the start stops`);
    t.match(
      gw.output(),
      new RegExp(`STORE_UNREADABLE: ${state.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`),
      `${what}: the error names the file`,
    );
    t.match(gw.output(), /left untouched/);
    t.equal(readFileSync(state, 'utf8'), content, `${what}: the file is as it was`);
  }
});

t.test('a temporary file left half written by a crash changes nothing', async (t) => {
  const { config, state } = setup();
  const first = await gatewayProcess(t, config);
  const { key } = await createKey(first);
  await requests(t, first, key, 2);
  t.equal(await first.stop('SIGTERM'), 0);
  writeFileSync(`${state}.99999.tmp`, '{"version":1,"accou');
  const second = await gatewayProcess(t, config);
  t.same(await used(second, key), { status: 200, used: 3 });
  await second.stop('SIGTERM');
});
