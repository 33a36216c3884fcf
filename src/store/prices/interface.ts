import type { PriceSet } from '../../prices/price-set-schema.js';

/**
 * One change of the price history: the date it touched and its number in the store's sequence
 * of changes (1, 2, …; shared by every gateway of the deployment). A price event's id carries
 * it, so a change that brings back a set seen before (published again after a cancel, or a
 * revert) is news again, while one change is one event whichever gateway tells of it.
 */
export interface PriceChange {
  effective_date: string;
  seq: number;
}

/**
 * The price history: one set per effective date. Every change is announced (coordination's
 * `subscribe`), so each instance reloads its snapshot. Storing the set a date already holds is
 * no change: it is neither numbered nor announced. Proven for every backend by
 * test/store/contract/prices.ts.
 */
export interface PriceStore {
  /** Price history, oldest first, one set per effective date. */
  listPriceSets(): Promise<PriceSet[]>;
  /**
   * Adds a set (replacing one of the same date when `replace`) and announces it. Null when
   * nothing changed: one existed and was kept, or it was the same set.
   */
  putPriceSet(set: PriceSet, replace: boolean): Promise<PriceChange | null>;
  /**
   * `putPriceSet` for many sets, announced once, so no instance serves one of them as current on
   * the way. Returns the changes, in the order of `sets`.
   */
  putPriceSets(sets: PriceSet[], replace: boolean): Promise<PriceChange[]>;
  /** Removes the set of that effective date and announces it. Null when there was none. */
  deletePriceSet(date: string): Promise<PriceChange | null>;
}
