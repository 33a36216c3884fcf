// What one cached account costs a gateway's heap: `node --expose-gc bench/account-cache.mjs [N]`
// (after `npm run build`). N accounts (10,000 by default) are made in the memory store, then
// each key is seen and its account loaded the way a first request does (KeyHashes, Meter); the
// heap grown by that, after a full GC, over N. The store's own copies are made before the first
// measurement, so only what the request path keeps is counted, the key records included (the
// memo is kept until measured). `N dropped`: what a key's record keeps of an entry the cache
// dropped for room. docs/performance.md.
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
const meterOf = (maxEntries) =>
  new Meter({
    accounts: store.accounts,
    counting: store.counting,
    coordination: store.coordination,
    plans: config.plans,
    zone: config.time_zone,
    now: Date.now,
    cache: { ...config.limits.account_cache, max_entries: maxEntries },
    retentionMs: 0,
    keyWarningMs: 0,
  });
/** Each key seen and its account loaded, as a first request does; the heap grown by that, per account. */
async function measure(meter) {
  const hashes = new KeyHashes(2 * n);
  const before = heap();
  for (const key of keys) {
    const known = hashes.of(key);
    if ((await meter.identify(known.hash)) !== 'active') throw new Error('not active');
    meter.hold(known, meter.cached(known.hash));
  }
  const grown = heap() - before;
  return { hashes, each: (grown / n).toFixed(0), mib: (grown / 2 ** 20).toFixed(1) };
}
// `dropped`: a cache of one entry, so every entry is dropped for room by the next and its key's
// record keeps what a consume needs (DroppedAccount), as with more accounts in rotation than
// max_entries. One measure a process: a meter stays subscribed to its store.
if (process.argv[3] === 'dropped') {
  const { each, mib } = await measure(meterOf(1));
  console.log(`${n} keys whose entry was dropped for room: ${each} bytes each (heap ${mib} MiB)`);
} else {
  const { each, mib } = await measure(meterOf(n));
  console.log(`${n} accounts cached: ${each} bytes each (heap ${mib} MiB)`);
}
await store.close();
