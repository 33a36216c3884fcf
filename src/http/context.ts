import { performance } from 'node:perf_hooks';
import type { Config } from '../config/config-schema.js';
import { KeyHashes } from '../keys/key-hashes.js';
import { AccessLog } from '../log/access.js';
import { type OutageCost, StoreOutageLog } from '../log/outage.js';
import { trustedProxies } from './client.js';
import type { Gateway, InvalidKeyReason, RouteDef } from './core-types.js';
import { corsOrigins } from './cors.js';
import type { ErrorAnswers } from './error-kinds.js';
import { EntityTags } from './etag.js';
import { Answers } from './response-headers.js';
import { routeTable } from './routes.js';

/**
 * What the public listener is built from: the shared parts the Gateway keeps as they are, the
 * config it reads once, and the routes every feature handed over.
 */
export type PublicDeps = Pick<
  Gateway,
  'meter' | 'book' | 'throttle' | 'metrics' | 'clock' | 'log' | 'storeDataLost'
> & {
  config: Config;
  routes: readonly RouteDef[];
  /** The error table's answers, built once for the process (app.ts). */
  errors: ErrorAnswers;
  /** A digest of the deployment's fixed content (the API document and release), for the ETag (etag.ts). */
  deploymentTag: () => string;
};

/** A store call of a request succeeded: /readyz may say ready again, and an outage is over. */
export function storeWorked(g: Gateway): void {
  if (g.storeFailedAt === Number.NEGATIVE_INFINITY) return;
  g.storeFailedAt = Number.NEGATIVE_INFINITY;
  g.storeOutage.ended();
}

/**
 * A request's store call failed: counted, /readyz says not ready until one succeeds (or for a
 * while), and the outage log hears what it cost the request (logged once, then in summaries).
 */
export function storeError(g: Gateway, err: Error, cost: OutageCost): void {
  g.metrics.storeErrors.inc();
  g.storeFailedAt = performance.now();
  g.storeOutage.failed(err.message, cost);
}

export function buildGateway(deps: PublicDeps): Gateway {
  const { config, routes: defs, deploymentTag, errors, ...rest } = deps;
  const { metrics } = deps;
  const { routes, patterns } = routeTable(defs, metrics);
  const reasons: InvalidKeyReason[] = ['missing', 'malformed', 'unknown', 'throttled'];
  return {
    ...rest,
    routes,
    patterns,
    unmatched: metrics.forRoute('unmatched'),
    answers: new Answers(errors),
    keyHashes: new KeyHashes(config.limits.account_cache.max_entries),
    maxKeyLength: config.limits.max_key_length,
    maxHeaders: config.server.max_headers,
    access: config.log.access && deps.log.isLevelEnabled('info') ? new AccessLog(deps.log) : null,
    failOpen: config.store.on_error === 'allow',
    trustedProxies: trustedProxies(config),
    invalidKeys: Object.fromEntries(reasons.map((r) => [r, metrics.invalidKeys.labels(r)])) as Gateway['invalidKeys'],
    draining: false,
    storeFailedAt: Number.NEGATIVE_INFINITY,
    storeOutage: new StoreOutageLog(deps.log, config.store.on_error === 'allow'),
    corsOrigins: corsOrigins(config),
    etags: new EntityTags(deploymentTag, config.prices.max_age_days),
    countNotModified: config.metering.count_not_modified,
  };
}
