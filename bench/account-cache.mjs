// What one cached account costs a gateway's heap: `node --expose-gc bench/account-cache.mjs [N]`
// (after `npm run build`). N accounts (10,000 by default) are made in the memory store, then
// each key is seen and its account loaded the way a first request does (KeyHashes, Meter); the
// heap grown by that, after a full GC, over N. The store's own copies are made before the first
// measurement, so only what the request path keeps is counted. docs/performance.md.
import { loadConfig } from '../dist/config/load.js';
import { newAccount } from '../dist/keys/accounts.js';
import { KeyHashes } from '../dist/keys/key-hashes.js';
import { Meter } from '../dist/quota/meter.js';
import { MemoryStore } from '../dist/store/memory/memory-store.js';

if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');
const n = Number(process.argv[2] ?? 10_000);
const config = loadConfig({ env: {}, overrides: { limits: { account_cache: { max_entries: n } } } });
const store = new MemoryStore(Date.now, null);
const keys = [];
for (let i = 0; i < n; i++) {
  const { account, apiKey } = newAccount(
    config.plans,
    { plan: 'starter', label: 'bench', status: 'active', limit: null },
    Date.now(),
  );
  await store.accounts.createAccount(account);
  keys.push(apiKey);
}
const heap = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};
const meter = new Meter({
  accounts: store.accounts,
  counting: store.counting,
  coordination: store.coordination,
  plans: config.plans,
  zone: config.time_zone,
  now: Date.now,
  cache: config.limits.account_cache,
  retentionMs: 0,
  keyWarningMs: 0,
});
const hashes = new KeyHashes(2 * n);
const before = heap();
for (const key of keys) {
  const known = hashes.of(key);
  if ((await meter.identify(known.hash)) !== 'active') throw new Error('not active');
  known.cached = meter.cached(known.hash) ?? null;
}
const after = heap();
console.log(
  `${n} accounts cached: ${((after - before) / n).toFixed(0)} bytes each (heap ${((after - before) / 2 ** 20).toFixed(1)} MiB)`,
);
await store.close();
