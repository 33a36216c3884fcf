import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { adminHandler } from '../admin/admin-server.js';
import { auditLog } from '../admin/audit.js';
import type { LeakOperations } from '../admin/leak-operations.js';
import { buildOperations, type Operations } from '../admin/operations.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config-schema.js';
import type { PortalDeps } from '../features/portal/index.js';
import type { StripeWebhookDeps } from '../features/stripe-webhook/index.js';
import type { ErrorAnswers } from '../http/error-kinds.js';
import { publicHandler } from '../http/public.js';
import { type BoundListener, close } from '../http/public-server.js';
import type { InvalidKeyThrottle } from '../keys/throttle.js';
import type { Metrics } from '../metrics/gateway-metrics.js';
import type { PriceBook } from '../prices/book.js';
import { publicRoutes } from '../public-routes.js';
import type { Meter } from '../quota/meter.js';
import type { Store } from '../store/store.js';
import type { Tracing } from '../telemetry/tracing.js';
import type { PassThrough } from '../upstream/cache/cache.js';
import type { UpstreamPoller } from '../upstream/poller.js';
import type { PriceEvents } from '../webhooks/price-events.js';
import type { Cleanups } from './cleanups.js';
import { portalBaseUrl } from './portal-builder.js';

export interface PublicOptions {
  listener: BoundListener;
  /** The admin listener: closed after the public one has begun to drain. */
  admin: BoundListener;
  config: Config;
  store: Store;
  meter: Meter;
  book: PriceBook;
  throttle: InvalidKeyThrottle;
  metrics: Metrics;
  errors: ErrorAnswers;
  upstream: UpstreamPoller | null;
  proxy: PassThrough | null;
  /** Where the leak-report route hands signed reports (the admin side's LeakOperations). */
  leaks: LeakOperations;
  /** The customer portal's operations, or null when it is off. */
  portal: PortalDeps | null;
  /** The Stripe webhook, or null when it is not set up. */
  stripe: StripeWebhookDeps | null;
  /** Traces, or null when off. */
  tracing: Tracing | null;
  clock: Clock;
  log: Logger;
  cleanups: Cleanups;
}

/** The public listener, serving: its handler, and the drain that a stop begins with. */
export function buildPublic(o: PublicOptions): AddressInfo {
  const { config, store, cleanups, log } = o;
  const storeReady = (): Promise<boolean> =>
    store.ping().then(
      () => true,
      () => false,
    );
  const handler = publicHandler({
    config,
    meter: o.meter,
    book: o.book,
    throttle: o.throttle,
    metrics: o.metrics,
    clock: o.clock,
    log,
    storeDataLost: () => store.msSinceDataLoss() !== null,
    errors: o.errors,
    tracing: o.tracing,
    ...publicRoutes({
      config,
      storeReady,
      upstream: o.upstream,
      proxy: o.proxy,
      leaks: (tokens, from) => o.leaks.report(tokens, from),
      portal: o.portal,
      stripe: o.stripe,
      portalBaseUrl: () => portalBaseUrl(config, o.listener.address),
      book: o.book,
      log,
    }),
  });
  o.listener.serve(handler);
  // Cleanups run last first: the public listener starts draining the moment a stop begins (every
  // answer from then on says Connection: close), and the admin listener closes after it.
  cleanups.push(() => close(o.admin.server, 0, config.server.request_timeout_ms));
  cleanups.push((drainMs) => {
    handler.drain();
    return close(o.listener.server, drainMs, config.server.request_timeout_ms);
  });
  log.info({ address: o.listener.address }, 'public listener ready');
  return o.listener.address;
}

export interface AdminOptions {
  listener: BoundListener;
  config: Config;
  store: Store;
  book: PriceBook;
  priceEvents: PriceEvents;
  metrics: Metrics;
  /** The billing exporters' names. */
  exporters: string[];
  /** An event was enqueued: the delivery worker looks at once. */
  kick: () => void;
  clock: Clock;
  log: Logger;
}

/** The admin listener, serving the operations; and the operations, for the public leak route and the demo accounts. */
export function buildAdmin(o: AdminOptions): { address: AddressInfo; ops: Operations } {
  const { config, log } = o;
  const ops = buildOperations({
    store: o.store,
    config,
    book: o.book,
    clock: o.clock,
    audit: auditLog(log),
    priceEvents: o.priceEvents,
    exporters: o.exporters,
    enqueued: o.kick,
  });
  const { token } = config.listen.admin;
  o.listener.serve(adminHandler(ops, o.metrics, token, log, config.server.max_headers));
  log.info(
    { address: o.listener.address, auth: token ? 'bearer token' : 'none (loopback only)' },
    'admin listener ready',
  );
  return { address: o.listener.address, ops };
}
