import { type FSWatcher, readFileSync, watch } from 'node:fs';
import type { Logger } from 'pino';
import { GatewayError } from '../failures.js';
import type { PriceStore } from '../store/store.js';
import { describeIssues, type PriceSet, type PriceSetDocument, priceHistoryDocument } from './price-set-schema.js';

/**
 * Reads a price-history file: a JSON array of price-set documents (see `parsePriceHistory`).
 */
export function readPriceFile(file: string): PriceSet[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new GatewayError('PRICE_SET_INVALID', `${file}: ${(e as Error).message}`);
  }
  return parsePriceHistory(raw, `${file}: `);
}

/**
 * Validates a price-history file's document: each date once. A set without `updated_at` gets its effective time (the shipped research data
 * records no announcement times). Problems are named with `prefix` (the file) and the field.
 */
export function parsePriceHistory(raw: unknown, prefix = ''): PriceSet[] {
  const parsed = priceHistoryDocument.safeParse(raw);
  if (!parsed.success) {
    const lines = describeIssues(parsed.error, prefix);
    throw new GatewayError('PRICE_SET_INVALID', lines.join('\n'), lines);
  }
  return withUpdatedAt(parsed.data);
}

/** A history's sets, each without `updated_at` given its effective time. */
export const withUpdatedAt = (sets: PriceSetDocument[]): PriceSet[] =>
  sets.map((s) => ({ ...s, updated_at: s.updated_at ?? `${s.effective_date} 00:01:00` }));

/**
 * Reads several price-history files (one per source range) as one history: a date in two files
 * is refused, since which file's set would win is nobody's decision.
 */
export function readPriceFiles(files: readonly string[]): PriceSet[] {
  const from = new Map<string, string>();
  const sets: PriceSet[] = [];
  for (const file of files)
    for (const s of readPriceFile(file)) {
      const other = from.get(s.effective_date);
      if (other !== undefined)
        throw new GatewayError('PRICE_SET_INVALID', `${file}: effective_date ${s.effective_date} is also in ${other}`);
      from.set(s.effective_date, file);
      sets.push(s);
    }
  return sets;
}

/** Loads the files' sets into the store. With `replace` false a set already published for a date is kept. */
export async function loadPriceFiles(prices: PriceStore, files: readonly string[], replace: boolean): Promise<number> {
  // One announcement for the whole history: instances reload once, not once per set. Async, so
  // a bad file is a rejection (the watcher catches it), never a throw.
  return (await prices.putPriceSets(readPriceFiles(files), replace)).length;
}

/**
 * Picks up edits to the price file: the file's sets replace those of the same dates. A bad edit
 * is logged and changes nothing. Editors often replace the file, so the watch follows the path.
 */
export function watchPriceFile(prices: PriceStore, file: string, log: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  let watcher: FSWatcher | undefined;
  const reload = (): void => {
    loadPriceFiles(prices, [file], true)
      .then((n) => log.info({ file, sets: n }, 'price file reloaded'))
      .catch((err: unknown) => log.error({ err, file }, 'price file rejected; prices unchanged'));
  };
  const start = (retrying = false): void => {
    try {
      watcher = watch(file, onChange);
    } catch (err) {
      // Mid-replace the file may be missing for a moment: look again shortly, and read it then.
      log.warn({ err, file }, 'cannot watch price file; retrying');
      timer = setTimeout(() => start(true), 1000);
      return;
    }
    watcher.on('error', (err) => log.warn({ err, file }, 'cannot watch price file'));
    if (retrying) reload();
  };
  const onChange = (): void => {
    clearTimeout(timer);
    // Debounced: one save is several change events, and a rename needs a fresh watch.
    timer = setTimeout(() => {
      watcher?.close();
      start();
      reload();
    }, 100);
  };
  start();
  return () => {
    clearTimeout(timer);
    watcher?.close();
  };
}
