import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { proxyPathMatches } from '../config/schema.js';
import { KeyHashes } from '../keys/key-hashes.js';
import type { InvalidKeyThrottle } from '../keys/throttle.js';
import { AccessLog, accessUrl } from '../log.js';
import type { Metrics, RouteMetrics } from '../metrics/metrics.js';
import type { PriceBook } from '../prices/book.js';
import type { AccountEntry, Meter } from '../quota/meter.js';
import type { UpstreamPoller } from '../upstream/poller.js';
import type { OriginProxy } from '../upstream/proxy.js';
import { Answers } from './answer.js';
import { type TrustedProxies, trustedProxies } from './client.js';
import { type CorsOrigins, corsOrigins } from './cors.js';
import { PLAIN_KEY_PARAM, redactUrl } from './request.js';
import { buildRoutes, proxyRoutes, type Route } from './routes.js';

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
  /** Whether the store lost its data since start; for /readyz and the invalid-key throttle. */
  storeDataLost(): boolean;
  /** Pass-through to the origin, and its poller; null without an upstream. */
  proxy: OriginProxy | null;
  upstream: UpstreamPoller | null;
}

/** A route with its metrics bound once. */
export interface RouteEntry {
  route: Route;
  metrics: RouteMetrics;
  /** The access log's URL for `PATH?api_key=K`, the usual request (null for pass-through patterns). */
  plainKeyUrl: string | null;
}

export type InvalidKeyReason = 'missing' | 'malformed' | 'unknown' | 'throttled';

/**
 * Everything the public listener's request path reads, worked out once when the listener is
 * built: a request only looks things up in here.
 */
export interface Gateway extends Omit<PublicDeps, 'config'> {
  routes: ReadonlyMap<string, RouteEntry>;
  /** `upstream.proxy_paths`, tried in order when no route of the gateway's own matches. */
  proxied: readonly RouteEntry[];
  /** Metrics of requests that match no route (404, 400). */
  unmatched: RouteMetrics;
  answers: Answers;
  keyHashes: KeyHashes<AccountEntry>;
  maxKeyLength: number;
  /** `server.max_headers`. */
  maxHeaders: number;
  /** The access log, or null when log.access is off. */
  access: AccessLog | null;
  /** store.on_error: allow. */
  failOpen: boolean;
  trustedProxies: TrustedProxies;
  invalidKeys: Record<InvalidKeyReason, { inc(): void }>;
  /** Set when the listener drains for shutdown: answers then close their connection. */
  draining: boolean;
  /** `prices.max_age_days` and `prices.stale_is_unready`, for /readyz. */
  staleness: { maxAgeDays: number; unready: boolean };
  /** The last store check of /readyz, reused for a second. */
  storeCheck: { at: number; up: boolean } | null;
  /** When (performance.now) a request last failed for the store, unless one has succeeded since; for /readyz. */
  storeFailedAt: number;
  /** `server.cors_origins`, or null when CORS is off. */
  corsOrigins: CorsOrigins;
}

/** A store call of a request succeeded: /readyz may say ready again. */
export function storeWorked(g: Gateway): void {
  if (g.storeFailedAt !== Number.NEGATIVE_INFINITY) g.storeFailedAt = Number.NEGATIVE_INFINITY;
}

/** A request failed because the store did: counted, and /readyz says not ready until one succeeds (or for a while). */
export function storeError(g: Gateway): void {
  g.metrics.storeErrors.inc();
  g.storeFailedAt = performance.now();
}

export function buildGateway(deps: PublicDeps): Gateway {
  const { config, ...rest } = deps;
  const { metrics } = deps;
  const routes = new Map<string, RouteEntry>();
  for (const [path, route] of buildRoutes(config))
    routes.set(path, {
      route,
      metrics: metrics.forRoute(route.name),
      // The line a plain-key request would get, made by the same redaction.
      plainKeyUrl: accessUrl(redactUrl(`${path}?${PLAIN_KEY_PARAM}K`)),
    });
  const reasons: InvalidKeyReason[] = ['missing', 'malformed', 'unknown', 'throttled'];
  return {
    ...rest,
    routes,
    proxied: proxyRoutes(config).map((route) => ({ route, metrics: metrics.forRoute(route.name), plainKeyUrl: null })),
    unmatched: metrics.forRoute('unmatched'),
    answers: new Answers(config.messages),
    keyHashes: new KeyHashes(config.limits.account_cache.max_entries),
    maxKeyLength: config.limits.max_key_length,
    maxHeaders: config.server.max_headers,
    access: config.log.access && deps.log.isLevelEnabled('info') ? new AccessLog(deps.log) : null,
    failOpen: config.store.on_error === 'allow',
    trustedProxies: trustedProxies(config),
    invalidKeys: Object.fromEntries(reasons.map((r) => [r, metrics.invalidKeys.labels(r)])) as Gateway['invalidKeys'],
    draining: false,
    staleness: { maxAgeDays: config.prices.max_age_days, unready: config.prices.stale_is_unready },
    storeCheck: null,
    storeFailedAt: Number.NEGATIVE_INFINITY,
    corsOrigins: corsOrigins(config),
  };
}

/** The route of a path: exact for the gateway's own, else the first `proxy_paths` entry that matches. */
export const routeFor = (g: Gateway, path: string): RouteEntry | undefined =>
  g.routes.get(path) ?? g.proxied.find((e) => proxyPathMatches(e.route.name, path));
