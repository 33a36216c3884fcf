import type { PriceSet } from '../../prices/schema.js';

/**
 * The price history: one set per effective date. Every change is announced (coordination's
 * `subscribe`), so each instance reloads its snapshot. Proven for every backend by
 * test/store/contract/prices.ts.
 */
export interface PriceStore {
  /** Price history, oldest first, one set per effective date. */
  listPriceSets(): Promise<PriceSet[]>;
  /** Adds a set (replacing one of the same date when `replace`) and announces it. Returns false when one existed and was kept. */
  putPriceSet(set: PriceSet, replace: boolean): Promise<boolean>;
  /**
   * `putPriceSet` for many sets, announced once, so no instance serves one of them as current on
   * the way. Returns how many were stored.
   */
  putPriceSets(sets: PriceSet[], replace: boolean): Promise<number>;
  /** Removes the set of that effective date and announces it. False when there was none. */
  deletePriceSet(date: string): Promise<boolean>;
}
