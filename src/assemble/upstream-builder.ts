import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { TrustedProxies } from '../http/client.js';
import type { ErrorAnswers } from '../http/error-kinds.js';
import type { Metrics } from '../metrics/gateway-metrics.js';
import type { PriceBook } from '../prices/book.js';
import type { CoordinationStore } from '../store/store.js';
import { type PassThrough, PassThroughCache } from '../upstream/cache/cache.js';
import { createOriginAgent, type UpstreamConfig } from '../upstream/origin.js';
import { UpstreamPoller } from '../upstream/poller.js';
import { OriginProxy } from '../upstream/proxy.js';
import type { Cleanups } from './cleanups.js';

export interface UpstreamOptions {
  upstream: UpstreamConfig;
  /** The poller's lease and shared status; purges from any instance, the admin API or the CLI. */
  coordination: CoordinationStore;
  book: PriceBook;
  metrics: Metrics;
  errors: ErrorAnswers;
  trusted: TrustedProxies;
  clock: Clock;
  log: Logger;
  cleanups: Cleanups;
}

/** In front of an origin: the poller (one instance at a time) and the caching pass-through. */
export function buildUpstream(o: UpstreamOptions): { poller: UpstreamPoller; proxy: PassThrough } {
  const { upstream: cfg, coordination, metrics, errors, clock, log, cleanups } = o;
  const agent = createOriginAgent(cfg, cfg.max_sockets);
  const pollAgent = createOriginAgent(cfg, 1);
  cleanups.push(
    () => agent.destroy(),
    () => pollAgent.destroy(),
  );
  const poller = new UpstreamPoller({
    cfg,
    agent: pollAgent,
    coordination,
    book: o.book,
    metrics,
    log: log.child({ component: 'upstream' }),
    now: clock.now,
  });
  cleanups.push(() => poller.close());
  poller.start();
  const originProxy = new OriginProxy({
    cfg,
    agent,
    errors,
    trusted: o.trusted,
    metrics,
    log: log.child({ component: 'pass-through' }),
  });
  cleanups.push(() => originProxy.close());
  const cache = new PassThroughCache({
    cfg,
    agent,
    proxy: originProxy,
    errors,
    metrics,
    log: log.child({ component: 'pass-through-cache' }),
    now: clock.now,
  });
  // A purge from any instance, the admin API or the CLI reaches this one through the store.
  const purgeOnPrices = cfg.cache.purge_on_prices;
  coordination.subscribe((event) => {
    if (event.type === 'cache_purge') cache.purge(event.path);
    else if (event.type === 'prices' && purgeOnPrices) cache.purge(null);
  });
  return { poller, proxy: cache };
}
