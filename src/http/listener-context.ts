import { performance } from 'node:perf_hooks';
import type { Config } from '../config/config-schema.js';
import { KeyHashes } from '../keys/key-hashes.js';
import { AccessLog } from '../log/access.js';
import { type OutageCost, StoreOutageLog } from '../log/outage.js';
import { trustedProxies } from './client.js';
import type { InvalidKeyReason, ListenerContext, RouteDef } from './core-types.js';
import { corsOrigins } from './cors.js';
import type { ErrorAnswers } from './error-kinds.js';
import { EntityTags } from './etag.js';
import { HeaderLists } from './response-headers.js';
import { routeTable } from './routes.js';

/**
 * What the public listener is built from: the shared parts its context keeps as they are, the
 * config it reads once, and the routes every feature handed over.
 */
export type PublicDeps = Pick<
  ListenerContext,
  'meter' | 'book' | 'throttle' | 'metrics' | 'clock' | 'log' | 'storeDataLost' | 'tracing'
> & {
  config: Config;
  routes: readonly RouteDef[];
  /** The error table's bodies, built once for the process (app.ts). */
  errors: ErrorAnswers;
  /** A digest of the deployment's fixed content (the API document and release), for the ETag (etag.ts). */
  deploymentTag: () => string;
};

/** A store call of a request succeeded: /readyz may say ready again, and an outage is over. */
export function storeWorked(l: ListenerContext): void {
  if (l.storeFailedAt === Number.NEGATIVE_INFINITY) return;
  l.storeFailedAt = Number.NEGATIVE_INFINITY;
  l.storeOutage.ended();
}

/**
 * A request's store call failed: counted, /readyz says not ready until one succeeds (or for a
 * while), and the outage log hears what it cost the request (logged once, then in summaries).
 */
export function storeError(l: ListenerContext, err: Error, cost: OutageCost): void {
  l.metrics.storeErrors.inc();
  l.storeFailedAt = performance.now();
  l.storeOutage.failed(err.message, cost);
}

export function buildListenerContext(deps: PublicDeps): ListenerContext {
  const { config, routes: defs, deploymentTag, errors, ...rest } = deps;
  const { metrics } = deps;
  const { routes, patterns } = routeTable(defs, metrics);
  const reason = (r: InvalidKeyReason): { inc(): void } => metrics.invalidKeys.labels(r);
  return {
    ...rest,
    routes,
    patterns,
    unmatched: { metrics: metrics.forRoute('unmatched'), plainKeyUrl: null, keyHeader: undefined, scope: 0 },
    headers: new HeaderLists(errors),
    keyHashes: new KeyHashes(config.limits.account_cache.max_entries),
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
    etags: new EntityTags(deploymentTag, config.prices.max_age_days),
    countNotModified: config.metering.count_not_modified,
  };
}
