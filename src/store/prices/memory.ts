import type { PriceSet } from '../../prices/price-set-schema.js';
import type { MemoryData } from '../memory/state.js';
import type { PriceChange, PriceStore } from './interface.js';

/** The price history of the embedded store (memory/state.ts holds it, with the change number). */
export class MemoryPrices implements PriceStore {
  constructor(private readonly data: MemoryData) {}

  async listPriceSets(): Promise<PriceSet[]> {
    return [...this.data.prices.values()].sort((a, b) => a.effective_date.localeCompare(b.effective_date));
  }

  async putPriceSet(set: PriceSet, replace: boolean): Promise<PriceChange | null> {
    const [change] = await this.putPriceSets([set], replace);
    return change ?? null;
  }

  async putPriceSets(sets: PriceSet[], replace: boolean): Promise<PriceChange[]> {
    const d = this.data;
    const changes: PriceChange[] = [];
    for (const set of sets) {
      const old = d.prices.get(set.effective_date);
      if (old && (!replace || JSON.stringify(old) === JSON.stringify(set))) continue;
      d.prices.set(set.effective_date, set);
      changes.push({ effective_date: set.effective_date, seq: ++d.priceSeq });
    }
    if (changes.length === 0) return changes;
    await d.savePrices();
    d.emit({ type: 'prices' });
    return changes;
  }

  async deletePriceSet(date: string): Promise<PriceChange | null> {
    const d = this.data;
    if (!d.prices.delete(date)) return null;
    const change = { effective_date: date, seq: ++d.priceSeq };
    await d.savePrices();
    d.emit({ type: 'prices' });
    return change;
  }
}
