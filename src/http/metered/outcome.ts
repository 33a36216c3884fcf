/**
 * The one mapping from a meter outcome to the request's answer, for every answerer that takes a
 * key: the metered routes (index.ts), the pass-through, usage.php and usage-history.php.
 *
 * - unknown key: 401, and it counts towards the invalid-key throttle; inactive account: 403.
 * - counted (ok, exhausted, over the burst): the prices with usage spliced in, a 304, or the
 *   limit or burst error (429).
 * - the store unreachable: 503, or, under `store.on_error: allow`, the answer unmetered for a key
 *   this process already knows as active (the fail-open policy, here once).
 *
 * Expected outcomes are values; only store failures and bugs are exceptions. This is the last
 * step before the answer (answer.ts): nothing here calls back into an earlier one.
 */
import { isGatewayError } from '../../failures.js';
import type { Refusal } from '../../quota/account-entry.js';
import type { AccountEntry, CountedResult, Meter, MeterResult } from '../../quota/meter.js';
import { usageJson } from '../../quota/usage.js';
import type { BurstState } from '../../store/store.js';
import { clientOf, crashed, fail, failRetry, send } from '../answer.js';
import type { Exchange, MeteredBody } from '../core-types.js';
import { type Compressed, negotiate, splicedGzip } from '../encoding.js';
import type { ErrorKind } from '../error-kinds.js';
import { keyRequest } from '../key-check.js';
import { storeError } from '../listener-context.js';
import { headerValue } from '../request.js';
import type { RateFields } from '../response-headers.js';
import { rateFields } from './rate.js';

/**
 * What a metered request's answer needs besides the count (count.ts `MeteredRequest` has it):
 * its key's hash, the body, the ETag.
 */
export interface MeteredAnswer {
  readonly x: Exchange;
  readonly keyHash: string;
  readonly body: MeteredBody;
  /** The ETag its answer carries (a conditional route, etag.ts), or null. */
  readonly etag: string | null;
  /** If-None-Match matched `etag`: the answer is a 304 without a body. */
  readonly notModified: boolean;
}

/**
 * A key the meter refused: unknown (a scanner's sign, counted by the throttle as the meter looked
 * it up), inactive, or never looked up because its address is blocked.
 */
export function keyRefused(x: Exchange, kind: 'unknown' | 'throttled' | Refusal): void {
  if (kind === 'unknown') return invalidKey(x, 'unknown');
  if (kind === 'throttled') return answerThrottled(x, x.services.throttle.blockedFor(clientOf(x)));
  fail(x, KEY_REFUSALS[kind]);
}

/** 429 for an address the invalid-key throttle blocks for `blockedMs` more. */
export function answerThrottled(x: Exchange, blockedMs: number): void {
  x.core.invalidKeys.throttled.inc();
  failRetry(x, 'throttled', Math.max(1, Math.ceil(blockedMs / 1000)));
}

const KEY_REFUSALS = {
  inactive: 'inactive_key',
  unpaid: 'account_unpaid',
  expired: 'expired_key',
  scope: 'key_scope',
  address: 'key_address',
} as const satisfies Record<Refusal, ErrorKind>;

export function invalidKey(x: Exchange, reason: 'malformed' | 'unknown'): void {
  // An unknown key was counted as an attempt when the meter looked it up (keys/throttle.ts).
  if (reason !== 'unknown') x.services.throttle.fail(clientOf(x));
  x.core.invalidKeys[reason].inc();
  fail(x, 'invalid_key');
}

/**
 * The outcome of a meter call: a refused key is answered here (null); a counted one is noted on
 * the request (its log line names the account) and handed back for the caller's answer.
 */
export function admitted(x: Exchange, result: MeterResult): CountedResult | null {
  if (result.kind === 'unknown' || result.kind === 'inactive' || result.kind === 'throttled') {
    keyRefused(x, result.kind);
    return null;
  }
  if (result.kind === 'refused') {
    // Known: its answer names the account in the log and may carry X-API-Key-Expires.
    x.account = result.entry;
    keyRefused(x, result.reason);
    return null;
  }
  x.account = result.entry;
  return result;
}

/**
 * What a request does when the store cannot be reached: `unmetered`, a counted request, is served
 * without counting under `store.on_error: allow`; `refusal`, one refused for its query (which
 * counts nothing), still hears what is wrong with it; `nothing`, the usage routes, whose answer
 * is the store's, has no answer without it.
 */
export type WithoutStore = 'unmetered' | 'refusal' | 'nothing';

/**
 * A request's store call failed. An outage (STORE_UNAVAILABLE) is counted and logged with what it
 * cost the request; anything else is a bug, answered 500. Only a key this process already knows
 * as active (`keyHash`) goes on (true): an unknown or inactive key must not get in just because
 * the store cannot say no. Otherwise the request is answered 503 here (false).
 */
export function storeFailed(
  x: Exchange,
  keyHash: string,
  err: unknown,
  without: WithoutStore,
  /** The 503 itself, for a route whose answers are pages rather than JSON. */
  unavailable: () => void = () => failRetry(x, 'unavailable', 1),
): boolean {
  const { core: l } = x;
  if (!isGatewayError(err, 'STORE_UNAVAILABLE')) {
    crashed(x, err);
    return false;
  }
  const unmetered = without === 'unmetered' && l.failOpen;
  const goesOn = (unmetered || without === 'refusal') && x.services.meter.knowsActive(keyHash, keyRequest(x));
  storeError(l, err, !goesOn ? 'refused' : unmetered ? 'unmetered' : null);
  if (!goesOn) {
    unavailable();
    return false;
  }
  if (unmetered) l.metrics.unmetered.inc();
  return true;
}

/** A counted metered request (or a HEAD's usage): its body with usage spliced in, a 304, or the limit error. */
export function answerCounted(
  m: MeteredAnswer,
  kind: CountedResult['kind'],
  entry: AccountEntry,
  used: number,
  burst?: BurstState,
): void {
  const { x, body: b, etag } = m;
  const { headers, clock } = x.services;
  const { countNotModified } = x.core;
  const now = clock.now();
  const rate = rateFields(entry, used, now, burst);
  // Over the burst: not counted, so no 304 either.
  if (kind === 'burst') return overBurst(x, entry, rate, burst);
  // Not counted, a 304 is answered while the allowance is used up: it serves no data.
  if (m.notModified && etag !== null && (kind === 'ok' || !countNotModified))
    return send(x, 304, headers.notModified(etag, rate), '');
  if (kind === 'exhausted') return limited(x, entry, rate, now);
  const usage = b.withUsage ? usageJson(entry, used, entry.allowance.limit) : '';
  if (b.compressed !== null) return sendCoded(m, b.compressed, rate, usage);
  if (!b.withUsage) return send(x, 200, headers.counted200(b.contentType, b.bytes, rate, etag), b.head + b.tail);
  send(x, 200, headers.counted200(b.contentType, b.bytes + usage.length, rate, etag), b.head + usage + b.tail);
}

/** The allowance used up or the burst limit reached (the pass-through's count): 429 with the rate headers. */
export function answerLimited(x: Exchange, counted: Exclude<CountedResult, { kind: 'ok' }>): void {
  const { entry, used, burst } = counted;
  const now = x.services.clock.now();
  const rate = rateFields(entry, used, now, burst);
  if (counted.kind === 'burst') return overBurst(x, entry, rate, burst);
  limited(x, entry, rate, now);
}

/** Over the burst limit: 429 with the wait until the window has room, in whole seconds (at least 1). */
function overBurst(x: Exchange, entry: AccountEntry, rate: RateFields, burst: BurstState | undefined): void {
  const { headers } = x.services;
  const { metrics } = x.core;
  metrics.burstRejections.labels(entry.allowance.plan).inc();
  const retryAfter = Math.max(1, Math.ceil((burst?.resetMs ?? 0) / 1000));
  send(x, 429, headers.errorLimited('burst', retryAfter, rate), headers.errors.burst.body);
}

function limited(x: Exchange, entry: AccountEntry, rate: RateFields, now: number): void {
  const { headers } = x.services;
  const { metrics } = x.core;
  const { period, plan } = entry.allowance;
  metrics.quotaRejections.labels(plan).inc();
  const errorKind = period.kind === 'trial' ? 'limit_trial' : 'limit_monthly';
  const retryAfter = Math.max(1, Math.ceil((period.endMs - now) / 1000));
  send(x, 429, headers.errorLimited(errorKind, retryAfter, rate), headers.errors[errorKind].body);
}

/** A metered request served unmetered (storeFailed said it goes on): no rate headers, `usage` null. */
export function answerUnmetered(m: MeteredAnswer): void {
  const { x, body: b, etag } = m;
  const { headers } = x.services;
  if (m.notModified && etag !== null) return send(x, 304, headers.notModifiedUnrated(etag), '');
  const body = b.withUsage ? `${b.head}null${b.tail}` : b.head + b.tail;
  send(x, 200, headers.unrated(b.contentType, b.bytes + (b.withUsage ? 4 : 0)), body);
}

/**
 * A metered answer of 1 KiB or more (historical.php, changes.php) in the coding the request
 * prefers, from the compressed forms kept with its body (encoding.ts): nothing is compressed
 * here but a first-time whole answer, once.
 */
function sendCoded(m: MeteredAnswer, c: Compressed, rate: RateFields, usage: string): void {
  const { x, body: b, etag } = m;
  const accept = headerValue(x.req, 'accept-encoding');
  const { headers } = x.services;
  if (c.whole !== null) {
    const enc = accept === undefined ? null : c.whole();
    const coding = negotiate(accept, enc?.br != null, enc?.gzip != null);
    const bytes = coding === 'identity' ? null : enc?.[coding];
    if (!bytes) return send(x, 200, headers.counted200(b.contentType, b.bytes, rate, etag, coding), b.head + b.tail);
    return send(x, 200, headers.counted200(b.contentType, bytes.length, rate, etag, coding), bytes);
  }
  const coding = negotiate(accept, false, c.spliced !== null);
  const tail = usage + b.tail;
  if (coding === 'identity' || c.spliced === null)
    return send(x, 200, headers.counted200(b.contentType, b.bytes + usage.length, rate, etag, coding), b.head + tail);
  const body = splicedGzip(c.spliced, tail);
  send(x, 200, headers.counted200(b.contentType, body.length, rate, etag, coding), body);
}

/** A request refused for its query or for lack of prices: the key still comes first, and nothing is counted. */
export async function refuse(x: Exchange, keyHash: string, kind: ErrorKind): Promise<void> {
  let who: Awaited<ReturnType<Meter['identify']>>;
  try {
    who = await x.services.meter.identify(keyHash, keyRequest(x), clientOf(x));
  } catch (err) {
    // A key known here as active may still hear what is wrong with its query.
    if (!storeFailed(x, keyHash, err, 'refusal')) return;
    who = 'active';
  }
  // The key's answer may carry X-API-Key-Expires: its entry is cached now, when it was found.
  if (who !== 'unknown' && who !== 'inactive') x.account = x.services.meter.cached(keyHash) ?? null;
  if (who !== 'active') return keyRefused(x, who);
  if (kind === 'unavailable') return failRetry(x, kind, 1);
  fail(x, kind);
}
