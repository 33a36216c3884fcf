import type { PriceSet } from '../../prices/schema.js';
import type { MemoryData } from '../memory/state.js';
import type { PriceStore } from './interface.js';

/** The price history of the embedded store (memory/state.ts holds it). */
export class MemoryPrices implements PriceStore {
  constructor(private readonly data: MemoryData) {}

  async listPriceSets(): Promise<PriceSet[]> {
    return [...this.data.prices.values()].sort((a, b) => a.effective_date.localeCompare(b.effective_date));
  }

  async putPriceSet(set: PriceSet, replace: boolean): Promise<boolean> {
    const d = this.data;
    if (!replace && d.prices.has(set.effective_date)) return false;
    d.prices.set(set.effective_date, set);
    await d.savePrices();
    d.emit({ type: 'prices' });
    return true;
  }

  async putPriceSets(sets: PriceSet[], replace: boolean): Promise<number> {
    const d = this.data;
    let stored = 0;
    for (const set of sets) {
      if (!replace && d.prices.has(set.effective_date)) continue;
      d.prices.set(set.effective_date, set);
      stored++;
    }
    if (stored === 0) return 0;
    await d.savePrices();
    d.emit({ type: 'prices' });
    return stored;
  }

  async deletePriceSet(date: string): Promise<boolean> {
    const d = this.data;
    if (!d.prices.delete(date)) return false;
    await d.savePrices();
    d.emit({ type: 'prices' });
    return true;
  }
}
