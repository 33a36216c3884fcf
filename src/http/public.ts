import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Metrics } from '../admin/metrics.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { isGatewayError } from '../errors.js';
import { hashKey, isWellFormedKey } from '../keys/keys.js';
import type { InvalidKeyThrottle } from '../keys/throttle.js';
import type { PriceBook } from '../prices/book.js';
import type { CountedResult, Meter, MeterResult } from '../quota/meter.js';
import { usageJson } from '../quota/usage.js';
import { clientAddress, trustedProxies } from './client.js';
import { buildErrorAnswers, type ErrorKind } from './errors.js';
import { hasBody, isSafeProxyPath, type OriginProxy } from '../upstream/proxy.js';
import type { UpstreamPoller } from '../upstream/poller.js';
import { parseTarget, readKey, redactUrl, type Target } from './request.js';
import { ALLOWED_METHODS, buildRoutes, type MeteredRoute, type Prepared, type ProxyRoute } from './routes.js';

export interface PublicDeps {
  config: Config;
  meter: Meter;
  book: PriceBook;
  throttle: InvalidKeyThrottle;
  metrics: Metrics;
  clock: Clock;
  log: Logger;
  /** Whether the store answers; for /readyz. */
  storeReady(): Promise<boolean>;
  /** Pass-through to the origin, and its poller; null without an upstream. */
  proxy: OriginProxy | null;
  upstream: UpstreamPoller | null;
}

type Headers = Array<string | number>;

// Unmetered: the store could not be reached and the operator chose to serve anyway (store.on_error: allow).
type Outcome = MeterResult | { kind: 'unmetered' };

/** One request in flight: what the answer and the log line and metrics need. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  start: number;
  route: string;
}

const BASE_HEADERS: Headers = ['Cache-Control', 'no-store', 'X-Content-Type-Options', 'nosniff'];

/**
 * The public listener's request handler: route → key → meter → answer. Expected outcomes
 * (unknown key, inactive, exhausted) are values mapped to the error table in one place (`fail`);
 * only store failures and bugs are exceptions.
 */
export function publicHandler(deps: PublicDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { config, meter, book, throttle, metrics, clock, log } = deps;
  const routes = buildRoutes(config);
  const errors = buildErrorAnswers(config.messages);
  const maxKeyLength = config.limits.max_key_length;
  const access = config.log.access;
  const failOpen = config.store.on_error === 'allow';
  const trusted = trustedProxies(config);
  const READY_TTL_MS = 1000;
  let storeCheck: { at: number; up: boolean } | null = null;

  function send(x: Exchange, status: number, headers: Headers, body: string, length = Buffer.byteLength(body)): void {
    x.res.writeHead(status, [...BASE_HEADERS, 'Content-Length', length, ...headers]);
    x.res.end(x.req.method === 'HEAD' ? undefined : body);
    record(x, status);
  }

  /** Metrics and the access line of an answer (status 0: the connection ended without one). */
  function record(x: Exchange, status: number): void {
    const seconds = (performance.now() - x.start) / 1000;
    metrics.observeRequest(x.route, status, seconds);
    if (access) log.info({ method: x.req.method, url: redactUrl(x.req.url ?? ''), status, ms: Math.round(seconds * 1e4) / 10 }, 'request');
  }

  function fail(x: Exchange, kind: ErrorKind, headers: Headers = []): void {
    const e = errors[kind];
    send(x, e.status, ['Content-Type', 'application/json', ...headers], e.body, e.length);
  }

  function rateHeaders(r: CountedResult): Headers {
    const { limit, period } = r.entry.allowance;
    return ['X-RateLimit-Limit', limit, 'X-RateLimit-Remaining', Math.max(0, limit - r.used), 'X-RateLimit-Reset', Math.ceil(period.endMs / 1000)];
  }

  function invalidKey(x: Exchange, address: string, reason: string): void {
    throttle.fail(address);
    metrics.invalidKeys.labels(reason).inc();
    fail(x, 'invalid_key');
  }

  /** `counts` false: authenticate and read usage only (HEAD on the gateway's own routes). */
  async function meterRequest(keyHash: string, counts: boolean): Promise<Outcome> {
    const started = performance.now();
    try {
      return counts ? await meter.consume(keyHash) : await meter.peek(keyHash);
    } catch (err) {
      if (!isGatewayError(err, 'STORE_UNAVAILABLE')) throw err;
      metrics.storeErrors.inc();
      // Only keys this process already knows as active are let through: an unknown or inactive
      // key must not get in just because the store cannot say no.
      if (failOpen && meter.knowsActive(keyHash)) {
        metrics.unmetered.inc();
        log.warn({ err: err.message }, 'store unavailable: serving unmetered (store.on_error: allow)');
        return { kind: 'unmetered' };
      }
      throw err;
    } finally {
      metrics.storeLatency.observe((performance.now() - started) / 1000);
    }
  }

  /** A request refused for its query or for lack of prices: the key still comes first, and nothing is counted. */
  async function refuse(x: Exchange, address: string, keyHash: string, kind: ErrorKind): Promise<void> {
    let who: Awaited<ReturnType<Meter['identify']>>;
    try {
      who = await meter.identify(keyHash);
    } catch (err) {
      if (!isGatewayError(err, 'STORE_UNAVAILABLE')) throw err;
      metrics.storeErrors.inc();
      // A key known here as active may still hear what is wrong with its query.
      if (!meter.knowsActive(keyHash)) throw err;
      who = 'active';
    }
    if (who === 'unknown') return invalidKey(x, address, 'unknown');
    if (who === 'inactive') return fail(x, 'inactive_key');
    return fail(x, kind, kind === 'unavailable' ? ['Retry-After', 1] : []);
  }

  async function metered(x: Exchange, route: MeteredRoute | ProxyRoute, target: Target): Promise<void> {
    const address = clientAddress(x.req, trusted);
    const input = readKey(x.req, target.query, maxKeyLength);
    const keyHash = input.kind === 'key' && isWellFormedKey(input.key) ? hashKey(input.key) : null;
    const blockedMs = throttle.blockedFor(address);
    // A blocked address is still served for keys this process knows as active: the block stops
    // key scanning without locking out customers who share the address (NAT, a proxy).
    if (blockedMs > 0 && !(keyHash !== null && meter.knowsActive(keyHash))) {
      metrics.invalidKeys.labels('throttled').inc();
      return fail(x, 'throttled', ['Retry-After', Math.ceil(blockedMs / 1000)]);
    }
    if (input.kind === 'missing') {
      metrics.invalidKeys.labels('missing').inc();
      return fail(x, 'missing_key');
    }
    if (keyHash === null) return invalidKey(x, address, 'malformed');
    let prepared: Prepared | null = null;
    if (route.kind === 'metered') {
      const p = route.prepare(target.query, book.snapshot());
      if (typeof p === 'string') return refuse(x, address, keyHash, p);
      prepared = p;
    } else if (!isSafeProxyPath(target.path) || hasBody(x.req)) {
      return refuse(x, address, keyHash, 'bad_request');
    }

    // A HEAD passed through costs the origin a whole request (charged to the service key): it counts.
    const result = await meterRequest(keyHash, x.req.method === 'GET' || route.kind === 'proxy');
    switch (result.kind) {
      case 'unknown':
        return invalidKey(x, address, 'unknown');
      case 'inactive':
        return fail(x, 'inactive_key');
      case 'exhausted': {
        const { period, plan } = result.entry.allowance;
        metrics.quotaRejections.labels(plan).inc();
        const retryAfter = Math.max(1, Math.ceil((period.endMs - clock.now()) / 1000));
        return fail(x, period.kind === 'trial' ? 'limit_trial' : 'limit_monthly', ['Retry-After', retryAfter, ...rateHeaders(result)]);
      }
      case 'unmetered':
        if (prepared === null) return forward(x, route.name, target, null);
        return send(x, 200, ['Content-Type', prepared.contentType], render(prepared, 'null'));
      case 'ok':
        if (prepared === null) return forward(x, route.name, target, result);
        return send(x, 200, ['Content-Type', prepared.contentType, ...rateHeaders(result)], render(prepared, usageJson(result.entry.usage, result.used, result.entry.allowance.limit)));
    }
  }

  /** Passes an admitted, counted request to the origin; it is taken back when the origin fails it. */
  async function forward(x: Exchange, route: string, target: Target, result: CountedResult | null): Promise<void> {
    const proxy = deps.proxy as OriginProxy;
    const status = await proxy.forward(x.req, x.res, {
      route,
      path: target.path,
      query: target.query,
      usage: result ? usageJson(result.entry.usage, result.used, result.entry.allowance.limit) : 'null',
      headers: result ? rateHeaders(result) : [],
      onFailure: () => {
        if (result) meter.refund(result.entry).catch((err: unknown) => log.warn({ err, account: result.entry.account.id }, 'refund failed: a failed pass-through stays counted'));
      },
    });
    record(x, status);
  }

  function render(p: Prepared, usage: string): string {
    return p.withUsage ? p.head + usage + p.tail : p.head + p.tail;
  }

  /** Readiness probes arrive from every balancer and orchestrator: ask the store at most once a second. */
  async function storeUp(): Promise<boolean> {
    const now = performance.now();
    if (storeCheck && now - storeCheck.at < READY_TTL_MS) return storeCheck.up;
    const up = await deps.storeReady();
    storeCheck = { at: performance.now(), up };
    return up;
  }

  async function ready(x: Exchange): Promise<void> {
    const current = book.current();
    const store = await storeUp();
    const status = current && store ? 200 : 503;
    const upstream = deps.upstream && (await upstreamView(deps.upstream, current?.set.effective_date ?? null));
    send(x, status, ['Content-Type', 'application/json'], JSON.stringify({ ready: status === 200, store, prices: current !== null, ...(upstream && { upstream }) }));
  }

  /** The origin as /readyz reports it: who polls, how the last poll went, and how long ago prices were confirmed. */
  async function upstreamView(poller: UpstreamPoller, effectiveDate: string | null): Promise<Record<string, unknown>> {
    const { role, status } = await poller.view();
    const last = status?.last_success_ms ?? null;
    return {
      role,
      state: status?.state ?? 'waiting',
      reason: status?.reason ?? null,
      last_success_at: last === null ? null : new Date(last).toISOString(),
      snapshot_age_s: last === null ? null : Math.max(0, Math.round((clock.now() - last) / 1000)),
      effective_date: effectiveDate,
    };
  }

  async function handle(x: Exchange): Promise<void> {
    const target = parseTarget(x.req.url ?? '');
    if (!target) return fail(x, 'bad_request');
    const route = routes(target.path);
    if (!route) return fail(x, 'not_found');
    x.route = route.name;
    if (x.req.method !== 'GET' && x.req.method !== 'HEAD') return fail(x, 'method_not_allowed', ['Allow', ALLOWED_METHODS]);
    if (route.kind === 'health') return send(x, 200, ['Content-Type', 'application/json'], '{"status":"ok"}');
    if (route.kind === 'ready') return ready(x);
    return metered(x, route, target);
  }

  return (req, res) => {
    const x: Exchange = { req, res, start: performance.now(), route: 'unmatched' };
    handle(x).catch((err: unknown) => {
      const unavailable = isGatewayError(err, 'STORE_UNAVAILABLE');
      log[unavailable ? 'warn' : 'error']({ err, url: redactUrl(req.url ?? '') }, unavailable ? 'store unavailable' : 'request failed');
      if (res.headersSent) return void res.destroy();
      if (unavailable) fail(x, 'unavailable', ['Retry-After', 1]);
      else fail(x, 'internal');
    });
  };
}
