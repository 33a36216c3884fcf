/**
 * The metered request path, as plain functions run in order (the way http-proxy-3 writes its
 * passes): key → throttle → prices → meter → answer. A request that finds its account in the
 * cache takes the warm path: `meter.consumeInto` hands the store's answer to the Exchange itself,
 * so no promise and no closure is made for it, and on the memory store the answer is written
 * before `metered` returns. Anything else (first sight of a key, HEAD, a changed account, a
 * refused query) takes the slow path through the meter's promises.
 *
 * Expected outcomes (unknown key, inactive, exhausted) are values mapped to the error table;
 * only store failures and bugs are exceptions.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { isGatewayError } from '../errors.js';
import type { KnownKey } from '../keys/key-hashes.js';
import type { RouteMetrics } from '../metrics/metrics.js';
import type { AccountEntry, Meter, MeterResult } from '../quota/meter.js';
import { usageJson } from '../quota/usage.js';
import type { ConsumeReceiver, ConsumeResult } from '../store/types.js';
import { clientOf, crashed, fail, failRetry, send } from './answer.js';
import { sendCoded } from './coded.js';
import { storeError, storeWorked } from './context.js';
import { noneMatchHits } from './etag.js';
import { rateFields } from './rate.js';
import { headerValue, PLAIN_KEY_PARAM, readKey, type Target } from './request.js';
import type { Exchange, Gateway, InvalidKeyReason, MeteredRoute, Prepared, RouteEntry } from './types.js';

/**
 * One request in flight (types.ts `Exchange`): what its answer, log line and metrics need. It
 * receives the store's answer to its consume itself (ConsumeReceiver).
 */
export class RequestExchange implements Exchange, ConsumeReceiver {
  readonly start = performance.now();
  metrics: RouteMetrics;
  keyHash = '';
  key: KnownKey<AccountEntry> | null = null;
  address: string | null = null;
  /** The route's access-log URL, set once the request is known to be `PATH?api_key=K`. */
  loggedUrl: string | null = null;
  route: RouteEntry | null = null;
  entry: AccountEntry | null = null;
  prepared: Prepared | null = null;
  storeStart = 0;
  etag: string | null = null;
  notModified = false;

  constructor(
    readonly g: Gateway,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
  ) {
    this.metrics = g.unmatched;
  }

  consumed(result: ConsumeResult): void {
    try {
      counted(this, result);
    } catch (err) {
      crashed(this, err);
    }
  }

  failed(err: Error): void {
    try {
      storeFailed(this, err);
    } catch (e) {
      crashed(this, e);
    }
  }
}

/**
 * The hash of the key a request carries, or null once the request has been refused for it
 * (throttled address, missing or malformed key). Every front door that takes a key starts here.
 */
export function keyOf(x: Exchange, search: string): string | null {
  const { g } = x;
  const header = keyHeader(x);
  const plain = knownPlainKey(g, search, header);
  if (plain !== undefined && x.req.url?.startsWith('/')) x.loggedUrl = x.route?.plainKeyUrl ?? null;
  const key = plain ?? readAndHash(g, search, header);
  if (throttled(x, typeof key === 'string' ? null : key.hash)) return null;
  if (key === 'missing') {
    g.invalidKeys.missing.inc();
    fail(x, 'missing_key');
    return null;
  }
  if (key === 'malformed') {
    invalidKey(x, 'malformed');
    return null;
  }
  x.key = key;
  x.keyHash = key.hash;
  return key.hash;
}

/**
 * The key the request's headers carry: `X-API-Key`, and on a route that names another header
 * (FuelSA's `key`) that one too. Two that differ are joined as a repeated header is (", "), which
 * no key can contain: refused as malformed, never one picked over the other.
 */
function keyHeader(x: Exchange): string | undefined {
  const standard = headerValue(x.req, 'x-api-key');
  const route = x.route?.route;
  if (route?.kind !== 'metered' || route.keyHeader === undefined) return standard;
  const other = headerValue(x.req, route.keyHeader);
  if (other === undefined || other === '') return standard;
  return standard === undefined || standard === '' || standard === other ? other : `${standard}, ${other}`;
}

/**
 * The common request, `?api_key=K` alone, with a key seen before: found with one lookup and no
 * parsing, since only well-formed keys are remembered (and those need no decoding).
 */
function knownPlainKey(g: Gateway, search: string, header: string | undefined): KnownKey<AccountEntry> | undefined {
  if (!search.startsWith(PLAIN_KEY_PARAM)) return undefined;
  const key = search.slice(PLAIN_KEY_PARAM.length);
  return header === undefined || header === key ? g.keyHashes.seen(key) : undefined;
}

function readAndHash(
  g: Gateway,
  search: string,
  header: string | undefined,
): KnownKey<AccountEntry> | 'missing' | 'malformed' {
  const input = readKey(search, header, g.maxKeyLength);
  if (input.kind !== 'key') return input.kind;
  return g.keyHashes.of(input.key) ?? 'malformed';
}

export function metered(x: RequestExchange, route: MeteredRoute, { search, path }: Target): void {
  const { g } = x;
  const keyHash = keyOf(x, search);
  if (keyHash === null) return;
  const snap = g.book.snapshot();
  const prepared = route.prepare(search, snap, path);
  if (typeof prepared === 'string') return void refuse(x, prepared).catch((err: unknown) => crashed(x, err));
  x.prepared = prepared;
  if (route.conditional) conditional(x, g.etags.of(snap, g.clock.now()));
  // HEAD and an uncounted 304 read the usage without counting it: one store call, as a consume.
  const peek = x.req.method === 'HEAD' || (x.notModified && !g.countNotModified);
  const entry = peek ? undefined : g.meter.warm(x.key as KnownKey<AccountEntry>);
  if (entry === undefined) return meterSlowly(x, peek ? g.meter.peek(keyHash) : g.meter.consume(keyHash));
  x.entry = entry;
  if (entry.account.status !== 'active') return fail(x, 'inactive_key');
  x.storeStart = performance.now();
  g.meter.consumeInto(entry, x);
}

/** Notes the route's ETag and whether the request's If-None-Match matches it (RFC 9110 §13.1.2). */
function conditional(x: Exchange, etag: string): void {
  x.etag = etag;
  const inm = headerValue(x.req, 'if-none-match');
  if (inm !== undefined && noneMatchHits(inm, etag)) x.notModified = true;
}

/**
 * A blocked address is refused before anything else, except for keys this process knows as
 * active and, at a small bounded rate, other well-formed keys: the block stops key scanning
 * without locking out customers who share the address (NAT, a proxy).
 */
export function throttled(x: Exchange, keyHash: string | null): boolean {
  const { g } = x;
  if (!g.throttle.anyBlocked()) return false;
  const blockedMs = g.throttle.blockedFor(clientOf(x));
  if (blockedMs <= 0) return false;
  if (keyHash !== null && (g.meter.knowsActive(keyHash) || g.throttle.letThrough(clientOf(x)))) return false;
  g.invalidKeys.throttled.inc();
  failRetry(x, 'throttled', Math.ceil(blockedMs / 1000));
  return true;
}

export function invalidKey(x: Exchange, reason: InvalidKeyReason): void {
  // A key unknown because the store lost its data is no sign of a scanner.
  if (reason !== 'unknown' || !x.g.storeDataLost()) x.g.throttle.fail(clientOf(x));
  x.g.invalidKeys[reason].inc();
  fail(x, 'invalid_key');
}

/** The store's answer on the warm path. */
function counted(x: Exchange, result: ConsumeResult): void {
  x.g.metrics.storeLatency.observe((performance.now() - x.storeStart) / 1000);
  storeWorked(x.g);
  switch (result.kind) {
    case 'ok':
    case 'exhausted':
      return answer(x, result.kind, x.entry as AccountEntry, result.used);
    case 'inactive':
      return fail(x, 'inactive_key');
    case 'changed':
      // Our copy of the account is out of date: the meter reloads it and decides again.
      x.g.meter.forget(x.keyHash);
      return meterSlowly(x, x.g.meter.consume(x.keyHash));
  }
}

/** The slow path: the meter loads the account (or reads usage, for HEAD) and counts. */
function meterSlowly(x: Exchange, pending: Promise<MeterResult>): void {
  x.storeStart = performance.now();
  pending
    .then(
      (result) => {
        x.g.metrics.storeLatency.observe((performance.now() - x.storeStart) / 1000);
        storeWorked(x.g);
        switch (result.kind) {
          case 'unknown':
            return invalidKey(x, 'unknown');
          case 'inactive':
            return fail(x, 'inactive_key');
          default:
            x.entry = result.entry;
            return answer(x, result.kind, result.entry, result.used);
        }
      },
      (err: unknown) => storeFailed(x, err),
    )
    .catch((err: unknown) => crashed(x, err));
}

/** A counted request (or a HEAD's usage): the prices with usage spliced in, or the limit error. */
export function answer(x: Exchange, kind: 'ok' | 'exhausted', entry: AccountEntry, used: number): void {
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

/**
 * The store could not be reached. Only keys this process already knows as active are served
 * unmetered under `store.on_error: allow`: an unknown or inactive key must not get in just
 * because the store cannot say no.
 */
function storeFailed(x: Exchange, err: unknown): void {
  const { g } = x;
  g.metrics.storeLatency.observe((performance.now() - x.storeStart) / 1000);
  if (!isGatewayError(err, 'STORE_UNAVAILABLE')) return crashed(x, err);
  const unmetered = g.failOpen && g.meter.knowsActive(x.keyHash);
  storeError(g, err, unmetered ? 'unmetered' : 'refused');
  if (unmetered) {
    g.metrics.unmetered.inc();
    if (x.notModified) return send(x, 304, g.answers.notModifiedUnrated(x.etag as string), '');
    const p = x.prepared as Prepared;
    const body = p.withUsage ? `${p.head}null${p.tail}` : p.head + p.tail;
    return send(x, 200, g.answers.unrated(p.contentType, p.bytes + (p.withUsage ? 4 : 0)), body);
  }
  failRetry(x, 'unavailable', 1);
}

/** A request refused for its query or for lack of prices: the key still comes first, and nothing is counted. */
export async function refuse(x: Exchange, kind: Exclude<ReturnType<MeteredRoute['prepare']>, Prepared>): Promise<void> {
  const { meter } = x.g;
  let who: Awaited<ReturnType<Meter['identify']>>;
  try {
    who = await meter.identify(x.keyHash);
  } catch (err) {
    if (!isGatewayError(err, 'STORE_UNAVAILABLE')) throw err;
    // A key known here as active may still hear what is wrong with its query.
    const known = meter.knowsActive(x.keyHash);
    storeError(x.g, err, known ? null : 'refused');
    if (!known) return failRetry(x, 'unavailable', 1);
    who = 'active';
  }
  if (who === 'unknown') return invalidKey(x, 'unknown');
  if (who === 'inactive') return fail(x, 'inactive_key');
  if (kind === 'unavailable') return failRetry(x, kind, 1);
  fail(x, kind);
}
