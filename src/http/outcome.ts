/**
 * The one mapping from a meter outcome to the request's answer, for every answerer that takes a
 * key: the metered routes (metered.ts), the pass-through, usage.php and usage-history.php.
 *
 * - unknown key: 401, and it counts towards the invalid-key throttle; inactive account: 403.
 * - counted (ok or exhausted): the prices with usage spliced in, a 304, or the limit error (429).
 * - the store unreachable: 503, or, under `store.on_error: allow`, the answer unmetered for a key
 *   this process already knows as active (the fail-open policy, here once).
 *
 * Expected outcomes are values; only store failures and bugs are exceptions.
 */
import { isGatewayError } from '../failures.js';
import type { KeyRefusal } from '../keys/gate.js';
import type { AccountEntry, CountedResult, Meter, MeterResult } from '../quota/meter.js';
import { usageJson } from '../quota/usage.js';
import { clientOf, crashed, fail, failRetry, send } from './answer.js';
import { storeError } from './context.js';
import type { Exchange, InvalidKeyReason, MeteredRoute, Prepared } from './core-types.js';
import { type Compressed, negotiate, type SplicedGzip, splicedGzip } from './encoding.js';
import type { ErrorKind } from './error-kinds.js';
import { rateFields } from './rate.js';
import { headerValue } from './request.js';
import type { RateFields } from './response-headers.js';

/** A key the meter refused: unknown (a scanner's sign, unless the store lost its data) or inactive. */
export function keyRefused(x: Exchange, kind: 'unknown' | 'inactive' | KeyRefusal): void {
  if (kind === 'unknown') return invalidKey(x, 'unknown');
  fail(x, KEY_REFUSALS[kind]);
}

const KEY_REFUSALS = {
  inactive: 'inactive_key',
  expired: 'expired_key',
  scope: 'key_scope',
  address: 'key_address',
} as const satisfies Record<'inactive' | KeyRefusal, ErrorKind>;

export function invalidKey(x: Exchange, reason: InvalidKeyReason): void {
  // A key unknown because the store lost its data is no sign of a scanner.
  if (reason !== 'unknown' || !x.g.storeDataLost()) x.g.throttle.fail(clientOf(x));
  x.g.invalidKeys[reason].inc();
  fail(x, 'invalid_key');
}

/**
 * The outcome of a meter call: a refused key is answered here (null); a counted one is noted on
 * the request (its log line names the account) and handed back for the caller's answer.
 */
export function admitted(x: Exchange, result: MeterResult): CountedResult | null {
  if (result.kind === 'unknown' || result.kind === 'inactive') {
    keyRefused(x, result.kind);
    return null;
  }
  if (result.kind === 'refused') {
    keyRefused(x, result.reason);
    return null;
  }
  x.entry = result.entry;
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
 * as active goes on (true): an unknown or inactive key must not get in just because the store
 * cannot say no. Otherwise the request is answered 503 here (false).
 */
export function storeFailed(x: Exchange, err: unknown, without: WithoutStore): boolean {
  const { g } = x;
  if (!isGatewayError(err, 'STORE_UNAVAILABLE')) {
    crashed(x, err);
    return false;
  }
  const unmetered = without === 'unmetered' && g.failOpen;
  const goesOn = (unmetered || without === 'refusal') && g.meter.knowsActive(x.keyHash);
  storeError(g, err, !goesOn ? 'refused' : unmetered ? 'unmetered' : null);
  if (!goesOn) {
    failRetry(x, 'unavailable', 1);
    return false;
  }
  if (unmetered) g.metrics.unmetered.inc();
  return true;
}

/** A counted request (or a HEAD's usage): the prices with usage spliced in, a 304, or the limit error. */
export function answerCounted(x: Exchange, kind: 'ok' | 'exhausted', entry: AccountEntry, used: number): void {
  const { answers, metrics, clock } = x.g;
  const { limit, period, plan } = entry.allowance;
  const now = clock.now();
  const rate = rateFields(entry, used, now);
  // Not counted, a 304 is answered while the allowance is used up: it serves no data.
  if (x.notModified && (kind === 'ok' || !x.g.countNotModified))
    return send(x, 304, answers.notModified(x.etag as string, rate), '');
  if (kind === 'exhausted') {
    metrics.quotaRejections.labels(plan).inc();
    const errorKind = period.kind === 'trial' ? 'limit_trial' : 'limit_monthly';
    const retryAfter = Math.max(1, Math.ceil((period.endMs - now) / 1000));
    return send(x, 429, answers.errorLimited(errorKind, retryAfter, rate), answers.errors[errorKind].body);
  }
  const p = x.prepared as Prepared;
  const usage = p.withUsage ? usageJson(entry.usage, used, limit) : '';
  if (p.compressed !== null) return sendCoded(x, p, p.compressed, rate, usage);
  if (!p.withUsage) return send(x, 200, answers.counted200(p.contentType, p.bytes, rate, x.etag), p.head + p.tail);
  send(x, 200, answers.counted200(p.contentType, p.bytes + usage.length, rate, x.etag), p.head + usage + p.tail);
}

/** A metered route's answer served unmetered (storeFailed said it goes on): no rate headers, `usage` null. */
export function answerUnmetered(x: Exchange): void {
  const { answers } = x.g;
  if (x.notModified) return send(x, 304, answers.notModifiedUnrated(x.etag as string), '');
  const p = x.prepared as Prepared;
  const body = p.withUsage ? `${p.head}null${p.tail}` : p.head + p.tail;
  send(x, 200, answers.unrated(p.contentType, p.bytes + (p.withUsage ? 4 : 0)), body);
}

/**
 * A metered answer of 1 KiB or more (historical.php, changes.php) in the coding the request
 * prefers, from the compressed forms kept with its Prepared (encoding.ts): nothing is compressed
 * here but a first-time whole answer, once.
 */
function sendCoded(x: Exchange, p: Prepared, c: Compressed, rate: RateFields, usage: string): void {
  const accept = headerValue(x.req, 'accept-encoding');
  const { answers } = x.g;
  if (c.whole !== null) {
    const enc = accept === undefined ? null : c.whole();
    const coding = negotiate(accept, enc?.br != null, enc?.gzip != null);
    const bytes = coding === 'identity' ? null : (enc?.[coding] as Buffer);
    if (bytes === null)
      return send(x, 200, answers.counted200(p.contentType, p.bytes, rate, x.etag, coding), p.head + p.tail);
    return send(x, 200, answers.counted200(p.contentType, bytes.length, rate, x.etag, coding), bytes);
  }
  const coding = negotiate(accept, false, c.spliced !== null);
  const tail = usage + p.tail;
  if (coding === 'identity')
    return send(x, 200, answers.counted200(p.contentType, p.bytes + usage.length, rate, x.etag, coding), p.head + tail);
  const body = splicedGzip(c.spliced as SplicedGzip, tail);
  send(x, 200, answers.counted200(p.contentType, body.length, rate, x.etag, coding), body);
}

/** A request refused for its query or for lack of prices: the key still comes first, and nothing is counted. */
export async function refuse(x: Exchange, kind: Exclude<ReturnType<MeteredRoute['prepare']>, Prepared>): Promise<void> {
  let who: Awaited<ReturnType<Meter['identify']>>;
  try {
    who = await x.g.meter.identify(x.keyHash);
  } catch (err) {
    // A key known here as active may still hear what is wrong with its query.
    if (!storeFailed(x, err, 'refusal')) return;
    who = 'active';
  }
  if (who !== 'active') return keyRefused(x, who);
  if (kind === 'unavailable') return failRetry(x, kind, 1);
  fail(x, kind);
}
