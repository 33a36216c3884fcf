import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { adminHandler } from './admin/admin-server.js';
import { auditLog } from './admin/audit.js';
import { buildOperations } from './admin/operations.js';
import { startBilling } from './billing/start.js';
import { type Clock, systemClock } from './clock.js';
import { type Config, priceFiles } from './config/config-schema.js';
import { GatewayError } from './failures.js';
import { trustedProxies } from './http/client.js';
import { buildErrorAnswers, type ErrorAnswers } from './http/error-kinds.js';
import { publicHandler } from './http/public.js';
import { type BoundListener, bind, close } from './http/public-server.js';
import { ensureDemoAccounts } from './keys/demo.js';
import { InvalidKeyThrottle } from './keys/throttle.js';
import { createLogging, type Logging } from './log/logging.js';
import { Metrics } from './metrics/gateway-metrics.js';
import { bookOptions, PriceBook } from './prices/book.js';
import { loadPriceFiles, watchPriceFile } from './prices/price-file.js';
import { warnWhenStale } from './prices/staleness.js';
import { publicRoutes } from './public-routes.js';
import { Meter } from './quota/meter.js';
import { retentionMs } from './quota/retention.js';
import { createStore } from './store/create.js';
import type { Store } from './store/store.js';
import { type PassThrough, PassThroughCache } from './upstream/cache/cache.js';
import { createOriginAgent } from './upstream/origin.js';
import { UpstreamPoller } from './upstream/poller.js';
import { OriginProxy } from './upstream/proxy.js';
import { startKeyExpiryCheck } from './webhooks/key-expiry.js';
import { PriceEvents } from './webhooks/price-events.js';
import { WebhookWorker } from './webhooks/worker.js';

export interface App {
  config: Config;
  store: Store;
  book: PriceBook;
  meter: Meter;
  metrics: Metrics;
  log: Logger;
  publicAddress: AddressInfo;
  adminAddress: AddressInfo;
  /** Working keys of demo accounts made at this start (memory store), by plan: see ensureDemoAccounts. */
  demoKeys: Record<string, string>;
  /**
   * Stops: in-flight requests finish, idle public connections are dropped after `drainMs`
   * (requests arriving meanwhile are answered, with `Connection: close`), then the store closes.
   */
  close(drainMs?: number): Promise<void>;
}

export interface AppOptions {
  clock?: Clock;
  log?: Logger;
  /** Lines the log has dropped since start (`Logging.droppedLines`), for the metric. */
  droppedLogLines?: () => number;
  store?: Store;
}

/** The composition root: config → logger → listeners (bound) → store → prices → meter → listeners (serving). */
export async function startApp(config: Config, opts: AppOptions = {}): Promise<App> {
  const clock = opts.clock ?? systemClock;
  const own = opts.log === undefined ? createLogging(config.log) : null;
  const log = opts.log ?? (own as Logging).log;
  const droppedLogLines = opts.droppedLogLines ?? own?.droppedLines ?? (() => 0);
  // Before the store: a second instance on a port already taken is refused before it writes anything.
  // Built once: the parsers' errors, the public answers and the pass-through's share them.
  const errors = buildErrorAnswers(config.messages);
  const listeners = await bindListeners(config, errors);
  const cleanups: Cleanups = [];
  const closeAll = async (drainMs = 0): Promise<void> => {
    for (const c of cleanups.reverse()) await c(drainMs);
    cleanups.length = 0;
    log.flush();
  };
  try {
    const store = opts.store ?? createStore(config, log, clock.now);
    cleanups.push(() => store.close());
    return {
      ...(await assemble(config, clock, log, droppedLogLines, store, { listeners, errors }, cleanups)),
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    // Closed already when assemble got as far as handing them their handlers; else closed here,
    // or they would keep a process whose start failed (an unreadable store file) from exiting.
    await Promise.all([close(listeners.public.server), close(listeners.admin.server)]);
    throw err;
  }
}

interface Listeners {
  public: BoundListener;
  admin: BoundListener;
}

// The setting that gives each listener its port, for the error when the port is taken.
const PORT_SETTING = { public: 'PORT (or listen.public.port)', admin: 'ADMIN_PORT (or listen.admin.port)' } as const;

/** Binds both listeners, or fails with an error that names the listener and the setting of its port. */
async function bindListeners(config: Config, errors: ErrorAnswers): Promise<Listeners> {
  const parserErrors = { bad: errors.bad_request, large: errors.headers_too_large, timeout: errors.request_timeout };
  const bindOne = ({ host, port }: { host: string; port: number }, which: keyof Listeners): Promise<BoundListener> =>
    bind(config.server, parserErrors, errors.unavailable, host, port).catch((err: NodeJS.ErrnoException) => {
      const why =
        err.code === 'EADDRINUSE' ? 'is in use (another gateway on this machine?)' : `cannot be bound (${err.message})`;
      throw new GatewayError(
        'CONFIG_INVALID',
        `${which} listener: ${host}:${port} ${why}; give this instance its own ${which} port with ` +
          `${PORT_SETTING[which]}. Nothing was started and the store was not touched.`,
      );
    });
  const pub = await bindOne(config.listen.public, 'public');
  try {
    return { public: pub, admin: await bindOne(config.listen.admin, 'admin') };
  } catch (err) {
    await close(pub.server);
    throw err;
  }
}

type Cleanups = Array<(drainMs: number) => void | Promise<void>>;

async function assemble(
  config: Config,
  clock: Clock,
  log: Logger,
  droppedLogLines: () => number,
  store: Store,
  { listeners, errors }: { listeners: Listeners; errors: ErrorAnswers },
  cleanups: Cleanups,
): Promise<Omit<App, 'close'>> {
  const seed = async (): Promise<void> => {
    const added = await loadPriceFiles(store, priceFiles(config), false);
    log.info({ files: priceFiles(config), added }, 'price files loaded into the store');
  };
  await seed();
  // The delivery worker starts once the listeners serve; events enqueued here wake it.
  let worker: WebhookWorker | null = null;
  const kick = (): void => worker?.kick();
  const priceEvents = new PriceEvents(store, config.prices.source_name, clock.now, log, kick);
  const book = new PriceBook(store, bookOptions(config), clock, log, seed, priceEvents);
  cleanups.push(() => book.close());
  await book.load();
  cleanups.push(warnWhenStale(book, config.prices.max_age_days, clock.now, log));
  const upstreamCfg = config.upstream.url === '' ? null : config.upstream;
  // In front of an origin the file only fills the history: edits must not replace the origin's sets.
  if (config.prices.watch_file && store.kind === 'memory' && !upstreamCfg)
    for (const file of priceFiles(config)) cleanups.push(watchPriceFile(store, file, log));

  const meter = new Meter({
    store,
    plans: config.plans,
    zone: config.time_zone,
    now: clock.now,
    cache: config.limits.account_cache,
    retentionMs: retentionMs(config),
  });
  const t = config.limits.invalid_key_throttle;
  const rule = { maxAttempts: t.max_attempts, windowMs: t.window_s * 1000, blockMs: t.block_s * 1000 };
  // Shared through Redis, so N instances behind a balancer do not give a scanner N times the tries.
  const share =
    store.kind === 'redis'
      ? (address: string): void => void store.reportInvalidKey(address, rule).catch(() => undefined)
      : undefined;
  const throttle = new InvalidKeyThrottle(rule, clock.now, share);
  store.subscribe((event) => {
    if (event.type === 'blocked') throttle.block(event.address, event.ms);
  });
  let upstream: UpstreamPoller | null = null;
  const metrics = new Metrics({
    cacheHitRatio: () => meter.hitRatio(),
    snapshotEffectiveMs: () => book.current()?.effectiveMs ?? null,
    now: clock.now,
    storeDataLost: () => store.dataLost(),
    droppedLogLines,
    upstreamLastSuccessMs: async () => (upstream ? ((await upstream.view()).status?.last_success_ms ?? null) : null),
    outbox: () => store.outboxStats(),
  });
  const storeReady = (): Promise<boolean> =>
    store.ping().then(
      () => true,
      () => false,
    );
  let proxy: PassThrough | null = null;
  if (upstreamCfg) {
    const agent = createOriginAgent(upstreamCfg, upstreamCfg.max_sockets);
    const pollAgent = createOriginAgent(upstreamCfg, 1);
    cleanups.push(
      () => agent.destroy(),
      () => pollAgent.destroy(),
    );
    const poller = new UpstreamPoller(
      upstreamCfg,
      pollAgent,
      store,
      book,
      metrics,
      log.child({ component: 'upstream' }),
      clock.now,
    );
    cleanups.push(() => poller.close());
    poller.start();
    upstream = poller;
    const originProxy = new OriginProxy(
      upstreamCfg,
      agent,
      errors,
      trustedProxies(config),
      metrics,
      log.child({ component: 'pass-through' }),
    );
    cleanups.push(() => originProxy.close());
    const cache = new PassThroughCache(
      upstreamCfg,
      agent,
      originProxy,
      errors,
      metrics,
      log.child({ component: 'pass-through-cache' }),
      clock.now,
    );
    // A purge from any instance, the admin API or the CLI reaches this one through the store.
    const purgeOnPrices = upstreamCfg.cache.purge_on_prices;
    store.subscribe((event) => {
      if (event.type === 'cache_purge') cache.purge(event.path);
      else if (event.type === 'prices' && purgeOnPrices) cache.purge(null);
    });
    proxy = cache;
  }

  const delivery = new WebhookWorker(store, config, metrics, log.child({ component: 'webhooks' }), clock.now);
  delivery.start();
  worker = delivery;
  // Cleanups run last first: this one after the listeners have drained (SIGTERM answers at
  // once with `Connection: close`), before the store closes, so attempts under way are recorded.
  cleanups.push(() => delivery.stop());
  const billing = startBilling(store, config, metrics, log, clock.now);
  cleanups.push(() => billing.stop());
  cleanups.push(startKeyExpiryCheck(store, config, clock, log.child({ component: 'key-expiry' }), kick));
  const audit = auditLog(log);
  const ops = buildOperations({
    store,
    config,
    book,
    clock,
    audit,
    priceEvents,
    exporters: billing.names,
    enqueued: kick,
  });

  const handler = publicHandler({
    config,
    meter,
    book,
    throttle,
    metrics,
    clock,
    log,
    storeDataLost: () => store.dataLost(),
    errors,
    ...publicRoutes(config, storeReady, upstream, proxy, (tokens, from) => ops.leaks.report(tokens, from)),
  });
  listeners.public.serve(handler);
  // Cleanups run last first: the public listener starts draining the moment a stop begins (every
  // answer from then on says Connection: close), and the admin listener closes after it.
  cleanups.push(() => close(listeners.admin.server, 0, config.server.request_timeout_ms));
  cleanups.push((drainMs) => {
    handler.gateway.draining = true;
    handler.gateway.storeOutage.close();
    return close(listeners.public.server, drainMs, config.server.request_timeout_ms);
  });
  const publicAddress = listeners.public.address;
  log.info({ address: publicAddress }, 'public listener ready');

  const { token } = config.listen.admin;
  listeners.admin.serve(adminHandler(ops, metrics, token, log, config.server.max_headers));
  const adminAddress = listeners.admin.address;
  log.info({ address: adminAddress, auth: token ? 'bearer token' : 'none (loopback only)' }, 'admin listener ready');

  const demo =
    config.demo_accounts && store.kind === 'memory'
      ? await ensureDemoAccounts(store, config.plans, clock.now())
      : { keys: {} };
  return {
    config,
    store,
    book,
    meter,
    metrics,
    log,
    publicAddress,
    adminAddress,
    demoKeys: demo.keys,
  };
}
