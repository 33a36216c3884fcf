import { performance } from 'node:perf_hooks';
import type { Config } from '../config/config-schema.js';
import { KeyHashes } from '../keys/key-hashes.js';
import { AccessLog } from '../log/access.js';
import { type OutageCost, StoreOutageLog } from '../log/outage.js';
import { trustedProxies } from './client.js';
import type { InvalidKeyReason, ListenerCore, RouteDef, Services } from './core-types.js';
import { corsOrigins } from './cors.js';
import type { ErrorAnswers } from './error-kinds.js';
import { EntityTags } from './etag.js';
import { HeaderLists } from './response-headers.js';
import { routeTable } from './routes.js';

// A store whose last request failed this recently is not ready, whatever its PING says (Redis
// out of memory answers PING and refuses every write).
const STORE_ERROR_UNREADY_MS = 5000;

/**
 * What the public listener is built from: the shared parts it keeps as they are, the config it
 * reads once, and the routes every feature handed over.
 */
export type PublicDeps = Pick<Services, 'meter' | 'book' | 'throttle' | 'clock' | 'log' | 'storeDataLost'> &
  Pick<ListenerCore, 'metrics' | 'tracing'> & {
    config: Config;
    routes: readonly RouteDef[];
    /** The error table's bodies, built once for the process (app.ts). */
    errors: ErrorAnswers;
    /** A digest of the deployment's fixed content (the API document and release), for the ETag (etag.ts). */
    deploymentTag: () => string;
  };

/** A store call of a request succeeded: /readyz may say ready again, and an outage is over. */
export function storeWorked(l: ListenerCore): void {
  if (l.storeFailedAt === Number.NEGATIVE_INFINITY) return;
  l.storeFailedAt = Number.NEGATIVE_INFINITY;
  l.storeOutage.ended();
}

/**
 * A request's store call failed: counted, /readyz says not ready until one succeeds (or for a
 * while), and the outage log hears what it cost the request (logged once, then in summaries).
 */
export function storeError(l: ListenerCore, err: Error, cost: OutageCost): void {
  l.metrics.storeErrors.inc();
  l.storeFailedAt = performance.now();
  l.storeOutage.failed(err.message, cost);
}

/**
 * Key records per cached entry. The records outlive the cache, so a key whose entry was dropped
 * for room keeps what a consume needs (quota/account-entry.ts `DroppedAccount`) and its miss costs
 * one round trip: the memo keeps at least half its size of the keys seen last (keys/key-hashes.ts),
 * so a rotation over twice as many accounts as `max_entries` still finds every key's record.
 */
const KEY_RECORDS_PER_ENTRY = 4;

/** The listener's two halves: the services its handlers use, and the core's own state. */
export function buildListenerContext(deps: PublicDeps): { services: Services; core: ListenerCore } {
  const { config, routes: defs, deploymentTag, errors, metrics } = deps;
  const { routes, patterns } = routeTable(defs, metrics);
  const reason = (r: InvalidKeyReason): { inc(): void } => metrics.invalidKeys.labels(r);
  const core: ListenerCore = {
    metrics,
    routes,
    patterns,
    unmatched: { metrics: metrics.forRoute('unmatched'), plainKeyUrl: null, keyHeader: undefined, scope: 0 },
    keyHashes: new KeyHashes(KEY_RECORDS_PER_ENTRY * config.limits.account_cache.max_entries),
    maxKeyLength: config.limits.max_key_length,
    maxHeaders: config.server.max_headers,
    access: config.log.access && deps.log.isLevelEnabled('info') ? new AccessLog(deps.log) : null,
    failOpen: config.store.on_error === 'allow',
    trustedProxies: trustedProxies(config),
    invalidKeys: {
      missing: reason('missing'),
      malformed: reason('malformed'),
      unknown: reason('unknown'),
      throttled: reason('throttled'),
    },
    draining: false,
    storeFailedAt: Number.NEGATIVE_INFINITY,
    storeOutage: new StoreOutageLog(deps.log, config.store.on_error === 'allow'),
    corsOrigins: corsOrigins(config),
    countNotModified: config.metering.count_not_modified,
    tracing: deps.tracing,
  };
  const services: Services = {
    meter: deps.meter,
    book: deps.book,
    etags: new EntityTags(deploymentTag, config.prices.max_age_days),
    throttle: deps.throttle,
    clock: deps.clock,
    headers: new HeaderLists(errors),
    log: deps.log,
    storeReady: () => performance.now() - core.storeFailedAt >= STORE_ERROR_UNREADY_MS,
    storeDataLost: deps.storeDataLost,
  };
  return { services, core };
}
