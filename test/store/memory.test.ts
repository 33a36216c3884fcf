import t from 'tap';
import { MemoryStore } from '../../src/store/memory.js';
import { storeContract } from './contract.js';

storeContract(t, async () => new MemoryStore());

t.test('expired counters start again from zero', async (t) => {
  let now = 1_000;
  const store = new MemoryStore(() => now);
  const a = { id: 'a', status: 'active' as const, plan: 'developer', limit: null, anchor: '', label: '', created_at: '', revision: 1, key_hash: 'h' };
  await store.createAccount(a);
  await store.consume({ accountId: 'a', revision: 1, periodId: 'p', limit: 1, expireAtMs: 2_000 });
  t.same(await store.consume({ accountId: 'a', revision: 1, periodId: 'p', limit: 1, expireAtMs: 2_000 }), { kind: 'exhausted', used: 1 });
  now = 2_000;
  t.equal(await store.usage('a', 'p'), 0);
  t.same(await store.consume({ accountId: 'a', revision: 1, periodId: 'p', limit: 1, expireAtMs: 3_000 }), { kind: 'ok', used: 1 });
});
