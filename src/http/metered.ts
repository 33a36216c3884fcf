/**
 * The metered request path, as plain functions run in order (the way http-proxy-3 writes its
 * passes): key → throttle → prices → meter → answer. A request that finds its account in the
 * cache takes the warm path: `meter.consumeInto` hands the store's answer to the Exchange itself,
 * so no promise and no closure is made for it, and on the memory store the answer is written
 * before `metered` returns. Anything else (first sight of a key, HEAD, a changed account, a
 * refused query) takes the slow path through the meter's promises.
 *
 * The meter's outcomes (unknown key, inactive, counted, exhausted, the store unreachable) are
 * mapped to answers in outcome.ts, as on every other route that takes a key.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { KnownKey } from '../keys/key-hashes.js';
import type { RouteMetrics } from '../metrics/gateway-metrics.js';
import type { AccountEntry, MeterResult } from '../quota/meter.js';
import type { ConsumeReceiver, ConsumeResult } from '../store/store.js';
import { clientOf, crashed, fail, failRetry } from './answer.js';
import { storeWorked } from './context.js';
import type { Exchange, Gateway, MeteredRoute, Prepared, RouteEntry } from './core-types.js';
import { noneMatchHits } from './etag.js';
import { admitted, answerCounted, answerUnmetered, invalidKey, keyRefused, refuse, storeFailed } from './outcome.js';
import { headerValue, PLAIN_KEY_PARAM, readKey, type Target } from './request.js';

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
      consumeFailed(this, err);
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
  if (entry.account.status !== 'active') return keyRefused(x, 'inactive');
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

/** The store's answer on the warm path. */
function counted(x: Exchange, result: ConsumeResult): void {
  x.g.metrics.storeLatency.observe((performance.now() - x.storeStart) / 1000);
  storeWorked(x.g);
  switch (result.kind) {
    case 'ok':
    case 'exhausted':
    case 'burst':
      return answerCounted(x, result.kind, x.entry as AccountEntry, result.used, result.burst);
    case 'inactive':
      return keyRefused(x, 'inactive');
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
        const counted = admitted(x, result);
        if (counted !== null) answerCounted(x, counted.kind, counted.entry, counted.used, counted.burst);
      },
      (err: unknown) => consumeFailed(x, err),
    )
    .catch((err: unknown) => crashed(x, err));
}

/** A consume the store could not answer: refused, or served unmetered (outcome.ts). */
function consumeFailed(x: Exchange, err: unknown): void {
  x.g.metrics.storeLatency.observe((performance.now() - x.storeStart) / 1000);
  if (storeFailed(x, err, 'unmetered')) answerUnmetered(x);
}
