/**
 * The count: one store round trip for a metered request. A request that finds its account in
 * the cache takes the warm path: `meter.consumeInto` hands the store's reply to a receiver
 * (count-reply.ts `WarmCount`), so no promise and no closure is made for it, and on the memory
 * store the answer is written before `count` returns. Anything else (first sight of a key, HEAD,
 * an uncounted 304) takes the slow path through the meter's promises (count-reply.ts
 * `countSlowly`). Either way the reply goes on to count-reply.ts, then outcome.ts.
 */
import type { KnownKey } from '../keys/key-hashes.js';
import type { AccountEntry } from '../quota/meter.js';
import { clientOf } from './answer.js';
import type { Exchange, MeteredBody } from './core-types.js';
import { type CountedThen, countSlowly, countSlowlyThen, FeatureCount, WarmCount } from './count-reply.js';
import { keyCheck, keyRefusal } from './key-check.js';
import { keyRefused } from './outcome.js';

/**
 * Counts a metered request, or with `peek` (HEAD, an uncounted 304) reads its usage without
 * counting: one store call either way. What its answer needs (`body`, `etag`, `notModified`) is
 * set once here, in the `MeteredRequest` the reply and the outcome read: on the warm path the
 * receiver itself, so a warm request makes no other object for it.
 */
export function count(
  x: Exchange,
  key: KnownKey<AccountEntry>,
  body: MeteredBody,
  etag: string | null,
  notModified: boolean,
  peek: boolean,
): void {
  const { meter } = x.listener;
  const keyHash = key.hash;
  const entry = peek ? undefined : meter.warm(key);
  if (entry === undefined) {
    const address = clientOf(x);
    const pending = peek ? meter.peek(keyHash, keyCheck(x), address) : meter.consume(keyHash, keyCheck(x), address);
    return countSlowly({ x, keyHash, body, etag, notModified }, pending);
  }
  x.account = entry;
  const refusal = accountRefusal(entry) ?? keyRefusal(x, entry);
  if (refusal !== null) return keyRefused(x, refusal);
  meter.consumeInto(entry, new WarmCount(x, keyHash, body, etag, notModified, entry));
}

/**
 * Counts a request whose answer a feature writes itself (the pass-through): `then` gets the count
 * (or null: served unmetered), and a refusal is answered here. A cached account takes the warm
 * path, as `count` does, so a pass-through cache hit makes no promise for its count.
 */
export function countThen(x: Exchange, key: KnownKey<AccountEntry>, then: CountedThen): void {
  const { meter } = x.listener;
  const entry = meter.warm(key);
  if (entry === undefined) return countSlowlyThen(x, key.hash, then, clientOf(x));
  x.account = entry;
  const refusal = accountRefusal(entry) ?? keyRefusal(x, entry);
  if (refusal !== null) return keyRefused(x, refusal);
  const day = meter.today();
  meter.consumeInto(entry, new FeatureCount(x, key.hash, entry, day, then), day);
}

/**
 * Why a cached account may not be counted on a metered route, checked before its count (null:
 * it may). A check added here refuses through outcome.ts, as `inactive` does.
 */
function accountRefusal(entry: AccountEntry): 'inactive' | null {
  return entry.account.status !== 'active' ? 'inactive' : null;
}
