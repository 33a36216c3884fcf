import { LRUCache } from 'lru-cache';
import { type AccountEntry, DroppedAccount } from './account-entry.js';

/**
 * The meter's cache of account entries by key hash, at most `maxEntries` of them. An entry dropped
 * for room (`onEvict` counts it) leaves its key's record a `DroppedAccount`, from which the key's
 * next request counts in one round trip (Meter `dropped`); one changed or expired leaves nothing.
 */
export function entryCache(maxEntries: number, onEvict: () => void): LRUCache<string, AccountEntry> {
  // maxSize counts entries as `max` would, without allocating max_entries slots up front (auto: up to 1M).
  return new LRUCache({
    maxSize: maxEntries,
    sizeCalculation: () => 1,
    dispose: (entry, _hash, reason) => {
      entry.live = false;
      if (reason !== 'evict') return;
      onEvict();
      const held = entry.holder;
      if (held !== null && held.cached === entry) held.cached = new DroppedAccount(entry);
    },
  });
}
