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

/** What the meter forgets of a key hash: its entry, its unknown mark, its lookup in flight. */
interface KeyedByHash {
  delete(keyHash: string): unknown;
  clear(): void;
}

/**
 * An account announcement: the entries of its keys go, and so do lookups in flight, which may
 * have read the account before the change (later requests must not join them). '*':
 * announcements may have been missed (the subscription was down), so nothing cached is trusted.
 */
export function forgetAnnounced(keyHashes: readonly string[] | '*', held: KeyedByHash[]): void {
  for (const cache of held) {
    if (keyHashes === '*') cache.clear();
    else for (const h of keyHashes) cache.delete(h);
  }
}
