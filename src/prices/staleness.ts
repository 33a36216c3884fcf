import type { Logger } from 'pino';
import type { PriceBook } from './book.js';

const DAY_MS = 86_400_000;

export interface PriceAge {
  effective_date: string;
  /** Whole days since the set took effect. */
  age_days: number;
  /** Older than `prices.max_age_days`: South African prices change monthly, so something stopped. */
  stale: boolean;
}

/** Whole days since `effectiveMs` at `now`. */
const ageDays = (effectiveMs: number, now: number): number => Math.max(0, Math.floor((now - effectiveMs) / DAY_MS));

/** Whether prices in effect from `effectiveMs` are stale at `now`: older than `maxAgeDays` whole days. */
export const staleAt = (effectiveMs: number, maxAgeDays: number, now: number): boolean =>
  ageDays(effectiveMs, now) > maxAgeDays;

export function priceAge(book: PriceBook, maxAgeDays: number, now: number): PriceAge | null {
  const current = book.current();
  if (!current) return null;
  const age = ageDays(current.effectiveMs, now);
  return {
    effective_date: current.set.effective_date,
    age_days: age,
    stale: staleAt(current.effectiveMs, maxAgeDays, now),
  };
}

/** Logs a warning at start and once a day while the served prices are stale. Returns the stop. */
export function warnWhenStale(book: PriceBook, maxAgeDays: number, now: () => number, log: Logger): () => void {
  const check = (): void => {
    const age = priceAge(book, maxAgeDays, now());
    if (age?.stale)
      log.warn({ ...age, max_age_days: maxAgeDays }, 'the prices served as current are stale: publish the new set');
  };
  check();
  const timer = setInterval(check, DAY_MS).unref();
  return () => clearInterval(timer);
}
