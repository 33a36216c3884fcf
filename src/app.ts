import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config/schema.js';
import { buildErrorAnswers } from './http/errors.js';
import { publicHandler } from './http/public.js';
import { close, createListener, listen } from './http/server.js';
import { createAccount } from './keys/accounts.js';
import { InvalidKeyThrottle } from './keys/throttle.js';
import { createLogger } from './log.js';
import { PriceBook } from './prices/book.js';
import { loadPriceFile, watchPriceFile } from './prices/file.js';
import { Meter } from './quota/meter.js';
import { MemoryStore } from './store/memory.js';
import type { Store } from './store/types.js';

const DAY_MS = 86_400_000;

export interface App {
  config: Config;
  store: Store;
  book: PriceBook;
  meter: Meter;
  log: Logger;
  publicAddress: AddressInfo;
  /** Keys of the demo accounts created at start (memory store only), by plan. */
  demoKeys: Record<string, string>;
  close(): Promise<void>;
}

export interface AppOptions {
  clock?: Clock;
  log?: Logger;
  store?: Store;
}

/** The composition root: config → logger → store → prices → meter → listeners. */
export async function startApp(config: Config, opts: AppOptions = {}): Promise<App> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? createLogger(config.log.level);
  const store = opts.store ?? new MemoryStore(clock.now);
  const cleanups: Array<() => void | Promise<void>> = [];

  const added = await loadPriceFile(store, config.prices.file, false);
  log.info({ file: config.prices.file, added }, 'price history loaded');
  const book = new PriceBook(store, config.time_zone, config.prices.source_name, clock, log);
  await book.load();
  cleanups.push(() => book.close());
  if (config.prices.watch_file && store.kind === 'memory') cleanups.push(watchPriceFile(store, config.prices.file, log));

  const meter = new Meter({
    store,
    plans: config.plans,
    zone: config.time_zone,
    now: clock.now,
    cache: config.limits.account_cache,
    retentionMs: config.store.counter_retention_days * DAY_MS,
  });
  const t = config.limits.invalid_key_throttle;
  const throttle = new InvalidKeyThrottle({ maxAttempts: t.max_attempts, windowMs: t.window_s * 1000, blockMs: t.block_s * 1000 }, clock.now);

  const storeReady = (): Promise<boolean> => store.ping().then(() => true, () => false);
  const errors = buildErrorAnswers(config.messages);
  const server: Server = createListener(
    publicHandler({ config, meter, book, throttle, clock, log, storeReady }),
    config.server,
    { bad: errors.bad_request, large: errors.headers_too_large },
  );
  const publicAddress = await listen(server, config.listen.public.host, config.listen.public.port);
  cleanups.push(() => close(server));
  log.info({ address: publicAddress }, 'public listener ready');

  const demoKeys: Record<string, string> = {};
  if (config.demo_accounts && store.kind === 'memory') {
    for (const [plan, p] of Object.entries(config.plans)) {
      const { api_key } = await createAccount(store, config.plans, { plan, label: `demo ${plan}`, status: 'active', limit: p.limit === undefined ? 100_000 : null }, clock.now());
      demoKeys[plan] = api_key;
    }
  }

  return {
    config,
    store,
    book,
    meter,
    log,
    publicAddress,
    demoKeys,
    async close() {
      for (const c of cleanups.reverse()) await c();
      await store.close();
      log.flush();
    },
  };
}
