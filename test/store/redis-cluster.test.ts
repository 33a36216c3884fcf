import { randomBytes } from 'node:crypto';
import pino from 'pino';
import t from 'tap';
import { RedisStore } from '../../src/store/redis/redis-store.js';
import { storedAccount } from '../helpers/accounts.js';
import { startCluster } from '../helpers/redis.js';
import { sleep } from '../helpers/wait.js';
import { DAY, storedKey } from './contract/fixtures.js';
import { storeContract } from './contract/index.js';

const cluster = await startCluster(t);
const log = pino({ level: 'silent' });
let seq = 0;
const open = (prefix = `c${process.pid}_${++seq}:`): RedisStore =>
  new RedisStore(
    {
      url: 'redis://127.0.0.1',
      key_prefix: prefix,
      command_timeout_ms: 1000,
      connect_timeout_ms: 5000,
      cluster: { nodes: cluster.nodes },
    },
    log,
  );

storeContract(t, async () => open());

t.test('the first commands after start reach every node: none is refused while a node still connects', async (t) => {
  // Each store's marker key lands on some node at start; its first pings go to any node. Before
  // every primary was connected at start, some were refused ("Connection is closed").
  const refused: string[] = [];
  // Fixed prefixes put the markers on fixed slots, over all three nodes.
  for (let i = 0; i < 8; i++) {
    const store = open(`first${i}:`);
    for (const r of await Promise.allSettled(Array.from({ length: 10 }, () => store.ping())))
      if (r.status === 'rejected') refused.push(String(r.reason));
    await store.close();
  }
  t.same(refused, []);
});

t.test('600 concurrent consumes from two instances, limit 100: exactly 100 succeed, used 1..100', async (t) => {
  const prefix = `exact${process.pid}:`;
  const stores = [open(prefix), open(prefix)];
  t.teardown(() => Promise.all(stores.map((s) => s.close())));
  const a = storedAccount({ label: 'cluster' });
  await stores[0]?.accounts.createAccount(a);
  const spec = { accountId: a.id, revision: 1, periodId: '2026-11', limit: 100, expireAtMs: Date.now() + 60_000 };
  const results = await Promise.all(
    Array.from({ length: 600 }, (_, i) => (stores[i % 2] as RedisStore).counting.consume(spec, DAY)),
  );
  const used = results.flatMap((r) => (r.kind === 'ok' ? [r.used] : [])).sort((x, y) => x - y);
  t.same(
    used,
    Array.from({ length: 100 }, (_, i) => i + 1),
  );
  t.ok(
    results.every((r) => r.kind === 'ok' || (r.kind === 'exhausted' && r.used === 100)),
    'every other request is refused at 100',
  );
  t.equal(await stores[1]?.counting.usage(a.id, '2026-11'), 100);
});

t.test(
  '1,000 concurrent consumes over 20 accounts on every slot, from two instances: none refused, each counted once',
  async (t) => {
    // Script calls of different slots must never share a pipeline: with ioredis' autopipelining, a
    // call whose first argument is not a key was grouped by that argument ("All keys in the pipeline
    // should belong to the same slots allocation group"), and half of such a burst failed.
    const prefix = `many${process.pid}:`;
    const stores = [open(prefix), open(prefix)];
    t.teardown(() => Promise.all(stores.map((s) => s.close())));
    const accounts = Array.from({ length: 20 }, (_, i) => storedAccount({ label: `many${i}` }));
    for (const a of accounts) await stores[0]?.accounts.createAccount(a);
    const burst = () =>
      Promise.allSettled(
        Array.from({ length: 1000 }, (_, i) => {
          const a = accounts[i % 20] as (typeof accounts)[number];
          const spec = {
            accountId: a.id,
            revision: 1,
            periodId: '2026-11',
            limit: 1000,
            expireAtMs: Date.now() + 60_000,
          };
          return (stores[i % 2] as RedisStore).counting.consume(spec, DAY);
        }),
      );
    for (const round of [1, 2]) {
      const results = await burst();
      const refused = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
      t.same(refused.slice(0, 3), [], `round ${round}: no consume refused (${refused.length} were)`);
      t.equal(
        results.filter((r) => r.status === 'fulfilled' && r.value.kind === 'ok').length,
        1000,
        `round ${round}: 1,000 counted`,
      );
    }
    for (const a of accounts)
      t.equal(await stores[1]?.counting.usage(a.id, '2026-11'), 100, 'each account counted 100, once each');
  },
);

t.test('a consume whose node connection drops mid-command is never resent, so never counted twice', async (t) => {
  const { Redis } = await import('ioredis');
  const prefix = `drop${process.pid}:`;
  const store = new RedisStore(
    {
      url: 'redis://127.0.0.1',
      key_prefix: prefix,
      command_timeout_ms: 500,
      connect_timeout_ms: 5000,
      cluster: { nodes: cluster.nodes },
    },
    log,
  );
  t.teardown(() => store.close());
  const id = `acct_${randomBytes(6).toString('hex')}`;
  await store.accounts.createAccount({
    id,
    status: 'active',
    plan: 'developer',
    limit: null,
    anchor: '',
    label: '',
    created_at: '',
    revision: 1,
    keys: [storedKey()],
  });
  const spec = { accountId: id, revision: 1, periodId: 'p', limit: 1000, expireAtMs: Date.now() + 600_000 };
  await store.counting.consume(spec, DAY);
  const counter = `${prefix}{acct:${id}}:used:p`;
  const owners = await Promise.all(
    cluster.nodes.map(async (n) => {
      const r = new Redis(n.port);
      const v = await r.get(counter).catch(() => null);
      r.disconnect();
      return v === null ? null : n;
    }),
  );
  const owner = owners.find((n) => n !== null);
  if (!owner) throw new Error('no node holds the counter');
  const admin = new Redis(owner.port);
  const busy = new Redis(owner.port);
  t.teardown(() => {
    admin.disconnect();
    busy.disconnect();
  });
  let answered = 0;
  let ok = 0;
  for (let i = 0; i < 6; i++) {
    const clients = ((await admin.client('LIST')) as string)
      .split('\n')
      .filter((l) => l.includes('name=fuel-gateway'))
      .map((l) => /id=(\d+)/.exec(l)?.[1] as string);
    // Keep the node busy so the consume sits unanswered in its queue, then cut the gateway's connection.
    const hog = busy.eval('local i=0 while i<20000000 do i=i+1 end return 1', 0);
    // Time for the script to reach the node and start: a busy node answers no one, so nothing shows it.
    await sleep(20);
    const call = store.counting.consume(spec, DAY).then(
      (r) => {
        answered++;
        if (r.kind === 'ok') ok++;
      },
      () => answered++,
    );
    // Time for the consume to reach the node's queue, behind the script: likewise unobservable.
    await sleep(20);
    await Promise.all([hog, call, ...clients.map((c) => admin.client('KILL', 'ID', c).catch(() => 0))]);
    // A pause between rounds, kept: the store connects again only on its next command, so no
    // reconnection shows that could be waited for.
    await sleep(400);
  }
  const counted = Number(await admin.get(counter)) - 1;
  t.equal(answered, 6);
  t.ok(counted <= answered, `counted ${counted} ≤ requests ${answered}: none twice`);
  t.ok(counted >= ok, `every success counted (${ok})`);
});

// Last in this file: it stops a node of the shared cluster.
t.test('a primary down at start fails only its own slots: the other nodes serve from the first call', async (t) => {
  await cluster.servers[2]?.stop();
  const store = open('down:');
  t.teardown(() => store.close());
  const results = await Promise.allSettled(
    Array.from({ length: 30 }, (_, i) => store.counting.usage(`acct_${i}`, 'p')),
  );
  const served = results.filter((r) => r.status === 'fulfilled').length;
  t.ok(served > 0 && served < 30, `${served} of 30 served`);
});
