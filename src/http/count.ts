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
import { countSlowly, WarmCount } from './count-reply.js';
import { keyRefused, type MeteredRequest } from './outcome.js';

/**
 * Counts a metered request, or with `peek` (HEAD, an uncounted 304) reads its usage without
 * counting: one store call either way.
 */
export function count(m: MeteredRequest, key: KnownKey<AccountEntry>, peek: boolean): void {
  const { meter } = m.x.listener;
  const entry = peek ? undefined : meter.warm(key);
  if (entry === undefined) return countSlowly(m, peek ? meter.peek(m.keyHash) : meter.consume(m.keyHash));
  m.x.account = entry;
  const refusal = accountRefusal(entry);
  if (refusal !== null) return keyRefused(m.x, refusal);
  meter.consumeInto(entry, new WarmCount(m, entry));
}

/**
 * Why a cached account may not be counted on a metered route, checked before its count (null:
 * it may). A check added here refuses through outcome.ts, as `inactive` does.
 */
function accountRefusal(entry: AccountEntry): 'inactive' | null {
  return entry.account.status !== 'active' ? 'inactive' : null;
}
