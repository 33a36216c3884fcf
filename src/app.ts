import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { type DemoAccounts, ensureDemoAccounts } from './admin/demo-accounts.js';
import type { Cleanups } from './assemble/cleanups.js';
import { buildAdmin, buildPublic } from './assemble/listeners.js';
import { buildMetering } from './assemble/metering.js';
import { buildPortal } from './assemble/portal-builder.js';
import { buildPrices } from './assemble/price-builder.js';
import { buildStripe } from './assemble/stripe-builder.js';
import { buildUpstream } from './assemble/upstream-builder.js';
import { buildWorkers } from './assemble/workers.js';
import { type Clock, systemClock } from './clock.js';
import { type Config, servedMessages } from './config/config-schema.js';
import { GatewayError } from './failures.js';
import { trustedProxies } from './http/client.js';
import { buildErrorAnswers, type ErrorAnswers } from './http/error-kinds.js';
import { type BoundListener, bind, close } from './http/public-server.js';
import { createLogging, type Logging } from './log/logging.js';
import { Metrics } from './metrics/gateway-metrics.js';
import type { PriceBook } from './prices/book.js';
import type { Meter } from './quota/meter.js';
import { createStore } from './store/create.js';
import type { Store } from './store/store.js';
import { startTracing } from './telemetry/start.js';
import type { PassThrough } from './upstream/cache/cache.js';
import type { UpstreamPoller } from './upstream/poller.js';
import type { WebhookWorker } from './webhooks/worker.js';

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
  /** What this start did to the demo accounts besides (ensureDemoAccounts), for the banner. */
  demo: Omit<DemoAccounts, 'keys'>;
  /** The customer portal's address, or null when `portal.enabled` is off. */
  portalUrl: string | null;
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
  /** Where the portal's sign-in links go without SMTP (default: stdout, beside the start's curl line). */
  print?: (line: string) => void;
}

/** The composition root: config → logger → listeners (bound) → store → prices → meter → listeners (serving). */
export async function startApp(config: Config, opts: AppOptions = {}): Promise<App> {
  const clock = opts.clock ?? systemClock;
  const own = opts.log === undefined ? createLogging(config.log) : null;
  const log = opts.log ?? (own as Logging).log;
  const droppedLogLines = opts.droppedLogLines ?? own?.droppedLines ?? (() => 0);
  // Before the store: a second instance on a port already taken is refused before it writes anything.
  // Built once: the parsers' errors, the public answers and the pass-through's share them.
  const errors = buildErrorAnswers(servedMessages(config));
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
      ...(await assemble(
        config,
        clock,
        log,
        droppedLogLines,
        store,
        { listeners, errors, print: opts.print },
        cleanups,
      )),
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

async function assemble(
  config: Config,
  clock: Clock,
  log: Logger,
  droppedLogLines: () => number,
  store: Store,
  { listeners, errors, print }: { listeners: Listeners; errors: ErrorAnswers; print?: (line: string) => void },
  cleanups: Cleanups,
): Promise<Omit<App, 'close'>> {
  // The delivery worker starts once the listeners serve; events enqueued here wake it.
  let worker: WebhookWorker | null = null;
  const kick = (): void => worker?.kick();
  const { book, priceEvents } = await buildPrices({ config, store, clock, log, kick, cleanups });
  const { meter, throttle } = buildMetering({ config, store, clock });
  let upstream: UpstreamPoller | null = null;
  const metrics = new Metrics({
    cacheHitRatio: () => meter.hitRatio(),
    cacheEvictions: () => meter.evictions,
    snapshotEffectiveMs: () => book.current()?.effectiveMs ?? null,
    now: clock.now,
    storeDataLost: () => store.msSinceDataLoss() !== null,
    droppedLogLines,
    upstreamLastSuccessMs: async () => (upstream ? ((await upstream.view()).status?.last_success_ms ?? null) : null),
    outbox: () => store.events.outboxStats(),
  });
  // Before the poller and the workers: their first calls are traced too.
  const tracing = await startTracing(config, metrics);
  if (tracing !== null) cleanups.push(() => tracing.shutdown());
  let proxy: PassThrough | null = null;
  if (config.upstream.url !== '') {
    const built = buildUpstream({
      upstream: config.upstream,
      coordination: store.coordination,
      book,
      metrics,
      errors,
      trusted: trustedProxies(config),
      clock,
      log,
      cleanups,
    });
    upstream = built.poller;
    proxy = built.proxy;
  }
  const { delivery, exporters } = buildWorkers({ config, store, metrics, clock, log, cleanups });
  worker = delivery;
  // Built first: the public leak-report route revokes through its operations.
  const { address: adminAddress, ops } = buildAdmin({
    listener: listeners.admin,
    config,
    store,
    book,
    priceEvents,
    metrics,
    exporters,
    kick,
    clock,
    log,
  });
  const portal = buildPortal({ config, store, ops, clock, address: listeners.public.address, print });
  const stripe = buildStripe({ config, store, ops, metrics, clock, log, cleanups });
  const publicAddress = buildPublic({
    listener: listeners.public,
    admin: listeners.admin,
    config,
    store,
    meter,
    book,
    throttle,
    metrics,
    errors,
    upstream,
    proxy,
    leaks: ops.leaks,
    portal: portal.deps,
    stripe,
    tracing,
    clock,
    log,
    cleanups,
  });
  // Demo accounts only where nothing outside this process could make accounts in its store.
  const demo =
    config.demo_accounts && !store.capabilities.sharedAcrossProcesses
      ? await ensureDemoAccounts(ops, store.accounts, config.plans, clock.now())
      : { keys: {}, replaced: false, granted: 0 };
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
    demo: { replaced: demo.replaced, granted: demo.granted },
    portalUrl: portal.url,
  };
}
