import t from 'tap';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { account, spec, storedKey } from './contract/fixtures.js';

t.test("the memory store's billing cursors and outstanding events survive a restart from its file", async (t) => {
  const file = `${t.testdir()}/store.json`;
  const first = new MemoryStore(Date.now, file);
  const a = account({ keys: [storedKey({ key_hash: 'ab'.repeat(32) })] });
  await first.accounts.createAccount(a);
  const start = Date.now() - 1000;
  const s = spec(a, {
    periodId: String(start),
    limit: 100,
    expireAtMs: Date.now() + 3_600_000,
    record: { plan: 'starter', kind: 'monthly', startMs: start, endMs: start + 86_400_000 },
  });
  for (let i = 0; i < 4; i++) await first.counting.consume(s, '2026-11-26');
  const [sent] = await first.billing.billingPrepare('stripe', a.id, 'cus_File1', 1_795_000_000_000);
  for (let i = 0; i < 2; i++) await first.counting.consume(s, '2026-11-26');
  await first.close();

  const second = new MemoryStore(Date.now, file);
  t.teardown(() => second.close());
  t.same(
    await second.billing.billingPrepare('stripe', a.id, 'cus_File1', 1_795_000_001_000),
    [sent],
    'the same event, unchanged',
  );
  await second.billing.billingAck(sent as never);
  const [next] = await second.billing.billingPrepare('stripe', a.id, 'cus_File1', 1_795_000_002_000);
  t.match(next, { from: 4, to: 6, value: 2 }, 'the cursor went on from where it was');
});
