import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { type Config, priceFiles } from '../config/config-schema.js';
import { bookOptions, PriceBook } from '../prices/book.js';
import { loadPriceFiles, watchPriceFile } from '../prices/price-file.js';
import { warnWhenStale } from '../prices/staleness.js';
import { patiently } from '../store/patiently.js';
import type { Store } from '../store/store.js';
import { PriceEvents } from '../webhooks/price-events.js';
import type { Cleanups } from './cleanups.js';

export interface PricesOptions {
  config: Config;
  store: Store;
  clock: Clock;
  log: Logger;
  /** An event was enqueued: the delivery worker looks at once. */
  kick: () => void;
  cleanups: Cleanups;
}

/** The price history: the shipped files seeded into the store, the book loaded, the file watched. */
export async function buildPrices(o: PricesOptions): Promise<{ book: PriceBook; priceEvents: PriceEvents }> {
  const { config, store, clock, log, cleanups } = o;
  const seed = async (): Promise<void> => {
    const added = await loadPriceFiles(store.prices, priceFiles(config), false);
    log.info({ files: priceFiles(config), added }, 'price files loaded into the store');
  };
  // A start on a loaded host may see a call outlast a short command timeout: both are harmless twice.
  await patiently(seed);
  const priceEvents = new PriceEvents({
    store: store.events,
    defaultSource: config.prices.source_name,
    now: clock.now,
    log,
    enqueued: o.kick,
  });
  const book = new PriceBook({ store, options: bookOptions(config), clock, log, seed, events: priceEvents });
  cleanups.push(() => book.close());
  await patiently(() => book.load());
  cleanups.push(warnWhenStale(book, config.prices.max_age_days, clock.now, log));
  // In front of an origin the file only fills the history: edits must not replace the origin's sets.
  // A shared store is managed from outside this process (admin API, CLI): the file only seeds it.
  if (config.prices.watch_file && !store.capabilities.sharedAcrossProcesses && config.upstream.url === '')
    for (const file of priceFiles(config)) cleanups.push(watchPriceFile(store.prices, file, log));
  return { book, priceEvents };
}
