import { randomBytes } from 'node:crypto';
import pino from 'pino';
import t from 'tap';
import { RedisStore } from '../../src/store/redis.js';
import type { StoredAccount } from '../../src/store/types.js';
import { startCluster } from '../helpers/redis.js';
import { storeContract } from './contract.js';

const cluster = await startCluster(t);
const log = pino({ level: 'silent' });
let seq = 0;
const open = (prefix = `c${process.pid}_${++seq}:`): RedisStore =>
  new RedisStore({ url: 'redis://127.0.0.1', key_prefix: prefix, command_timeout_ms: 1000, connect_timeout_ms: 5000, cluster: { nodes: cluster.nodes } }, log);

storeContract(t, async () => open());

t.test('600 concurrent consumes from two instances, limit 100: exactly 100 succeed, used 1..100', async (t) => {
  const prefix = `exact${process.pid}:`;
  const stores = [open(prefix), open(prefix)];
  t.teardown(() => Promise.all(stores.map((s) => s.close())));
  const a: StoredAccount = {
    id: `acct_${randomBytes(6).toString('hex')}`,
    status: 'active',
    plan: 'developer',
    limit: null,
    anchor: '2026-11-01T00:00:00+02:00',
    label: 'cluster',
    created_at: '2026-11-01T00:00:00.000Z',
    revision: 1,
    key_hash: randomBytes(32).toString('hex'),
  };
  await stores[0]?.createAccount(a);
  const spec = { accountId: a.id, revision: 1, periodId: '2026-11', limit: 100, expireAtMs: Date.now() + 60_000 };
  const results = await Promise.all(Array.from({ length: 600 }, (_, i) => (stores[i % 2] as RedisStore).consume(spec)));
  const used = results.flatMap((r) => (r.kind === 'ok' ? [r.used] : [])).sort((x, y) => x - y);
  t.same(used, Array.from({ length: 100 }, (_, i) => i + 1));
  t.ok(results.every((r) => r.kind === 'ok' || (r.kind === 'exhausted' && r.used === 100)), 'every other request is refused at 100');
  t.equal(await stores[1]?.usage(a.id, '2026-11'), 100);
});
