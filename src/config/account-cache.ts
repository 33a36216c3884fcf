import { getHeapStatistics } from 'node:v8';
import { z } from 'zod';
import { posInt } from './fields.js';

/**
 * Heap bytes one cached account costs a gateway, with room to spare: measured at 1.1 KiB with
 * its key's record (`node --expose-gc bench/account-cache.mjs`, docs/performance.md), and a busy
 * heap holds more than what is live.
 */
export const CACHED_ACCOUNT_BYTES = 2048;
/** At most this share of the heap's limit goes to cached accounts under `auto`. */
const HEAP_SHARE = 0.25;
const MAX_AUTO = 1_000_000;
const MIN_AUTO = 10_000;

/**
 * `auto`: as many accounts as a quarter of the heap's limit holds, between 10,000 and
 * 1,000,000. Entries exist only for accounts in use, so a gateway with fewer active accounts
 * uses less; the bound is what a larger active set may take before entries are evicted.
 */
export const autoEntries = (heapLimit = getHeapStatistics().heap_size_limit): number =>
  Math.min(MAX_AUTO, Math.max(MIN_AUTO, Math.floor((heapLimit * HEAP_SHARE) / CACHED_ACCOUNT_BYTES)));

export const maxEntries = z
  .union([z.literal('auto'), posInt])
  .transform((v) => (v === 'auto' ? autoEntries() : v))
  .describe(
    'Accounts cached per process; auto: as many as a quarter of the heap limit holds at 2 KiB each, 10,000 to 1,000,000',
  );
