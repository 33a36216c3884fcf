/**
 * The public routes of every feature, gathered for the composition root (app.ts): the one place
 * that knows them all, so the features need not know one another.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from './config/config-schema.js';
import { PROJECT_ROOT } from './config/load.js';
import { compatFuelsaRoutes } from './features/compat-fuelsa/index.js';
import { currentPricesRoutes } from './features/current/index.js';
import { healthRoutes } from './features/health/index.js';
import { historyRoutes } from './features/history/index.js';
import { openApi } from './features/openapi/index.js';
import { pageRoutes } from './features/page/index.js';
import { passThroughRoutes } from './features/pass-through/index.js';
import { type PortalDeps, portalRoutes } from './features/portal/index.js';
import { type LeakHandler, secretScanningRoutes } from './features/secret-scanning/index.js';
import { type StripeWebhookDeps, stripeWebhookRoutes } from './features/stripe-webhook/index.js';
import { usageRoutes } from './features/usage/index.js';
import type { RouteDef } from './http/core-types.js';
import type { PriceBook } from './prices/book.js';
import type { PassThrough } from './upstream/cache/cache.js';
import type { UpstreamPoller } from './upstream/poller.js';

export interface PublicRoutesOptions {
  config: Config;
  storeReady: () => Promise<boolean>;
  upstream: UpstreamPoller | null;
  proxy: PassThrough | null;
  leaks: LeakHandler;
  /** The customer portal's operations (null: off), and its public address for the emailed links. */
  portal: PortalDeps | null;
  portalBaseUrl: () => string;
  /** The Stripe webhook's secret and inbox, or null when STRIPE_WEBHOOK_SECRET is not set. */
  stripe: StripeWebhookDeps | null;
  /** The page is built, and compressed, as each of its snapshots comes into effect. */
  book: PriceBook;
  log: Logger;
}

/**
 * Every public route, from every feature, in the order the API document lists them. The
 * features know nothing of one another: what one needs of another (the page shows the document)
 * is handed over here.
 */
export function publicRoutes(o: PublicRoutesOptions): { routes: RouteDef[]; deploymentTag: () => string } {
  const { config, storeReady, upstream, proxy, leaks } = o;
  const routes: RouteDef[] = [];
  const openapi = openApi(routes);
  routes.push(
    ...currentPricesRoutes(config),
    ...historyRoutes(config),
    ...usageRoutes(config),
    ...compatFuelsaRoutes(config),
    ...openapi.routes,
    ...pageRoutes(config, openapi.document, o.book, o.log),
    ...healthRoutes(config, { storeReady, upstream }),
    ...secretScanningRoutes(config, leaks),
    ...stripeWebhookRoutes(config, o.stripe),
    // A pattern tried after every exact path: the metered routes are matched as before.
    ...portalRoutes(config.portal, o.portal, o.portalBaseUrl),
    ...passThroughRoutes(config, proxy),
  );
  // Built now that every route is known: a description that cannot be built fails the start.
  const document = JSON.stringify(openapi.document());
  // What a restart may change in the answers beside the prices: the document (from the config)
  // and the release (the page's markup). Part of the ETag, so a new release or config is not 304'd.
  const deploymentTag = (): string => createHash('sha256').update(RELEASE).update(document).digest('base64url');
  return { routes, deploymentTag };
}

const RELEASE = readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8');
