import { MemoryAccounts } from '../accounts/memory.js';
import { MemoryBilling } from '../billing/memory.js';
import { CompositeStore } from '../composite.js';
import { MemoryCoordination } from '../coordination/memory.js';
import { MemoryCounting } from '../counting/memory.js';
import { MemoryEvents } from '../events/memory.js';
import { MemoryKeys } from '../keys/memory.js';
import { MemoryPrices } from '../prices/memory.js';
import { MemoryData } from './state.js';

/**
 * The embedded single-process store: the memory implementations of the five concerns
 * composite.ts bundles (accounts, counting, prices, coordination, events) and of billing, over one
 * MemoryData (memory/state.ts), optionally kept in a file across restarts.
 */
export class MemoryStore extends CompositeStore {
  readonly kind = 'memory';
  readonly billing: MemoryBilling;
  readonly keys: MemoryKeys;
  private readonly data: MemoryData;

  /** `onWriteError`: a counter flush failed (it is tried again a second later). */
  constructor(
    now: () => number = Date.now,
    file: string | null = null,
    onWriteError: (err: unknown) => void = (err) => {
      throw err;
    },
  ) {
    const data = new MemoryData(now, file, onWriteError);
    super(
      new MemoryAccounts(data),
      new MemoryCounting(data),
      new MemoryPrices(data),
      new MemoryCoordination(data),
      new MemoryEvents(data),
    );
    this.data = data;
    this.billing = new MemoryBilling(data);
    this.keys = new MemoryKeys(data);
  }

  async ping(): Promise<void> {}

  dataLost(): boolean {
    return false;
  }

  close(): Promise<void> {
    return this.data.close();
  }
}
