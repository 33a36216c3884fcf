import { MemoryAccounts } from '../accounts/memory.js';
import { MemoryBilling } from '../billing/memory.js';
import { MemoryCoordination } from '../coordination/memory.js';
import { MemoryCounting } from '../counting/memory.js';
import { MemoryEvents } from '../events/memory.js';
import { MemoryKeys } from '../keys/memory.js';
import { MemoryPortal } from '../portal/memory.js';
import { MemoryPrices } from '../prices/memory.js';
import type { Store, StoreCapabilities } from '../store.js';
import { MemoryStripe } from '../stripe/memory.js';
import { MemoryData } from './state.js';

// Counting moves a crossing to the outbox in the same synchronous step, so none is left behind.
const CAPABILITIES: StoreCapabilities = { sharedAcrossProcesses: false, crossingsCanBeStranded: false };

/**
 * The embedded single-process store: the memory implementations of the six concerns over one
 * MemoryData (memory/state.ts), optionally kept in a file across restarts.
 */
export class MemoryStore implements Store {
  readonly kind = 'memory';
  readonly capabilities = CAPABILITIES;
  readonly accounts: MemoryAccounts;
  readonly counting: MemoryCounting;
  readonly prices: MemoryPrices;
  readonly coordination: MemoryCoordination;
  readonly events: MemoryEvents;
  readonly billing: MemoryBilling;
  readonly keys: MemoryKeys;
  readonly portal: MemoryPortal;
  readonly stripe: MemoryStripe;
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
    this.data = data;
    this.accounts = new MemoryAccounts(data);
    this.counting = new MemoryCounting(data);
    this.prices = new MemoryPrices(data);
    this.coordination = new MemoryCoordination(data);
    this.events = new MemoryEvents(data);
    this.billing = new MemoryBilling(data);
    this.keys = new MemoryKeys(data);
    this.portal = new MemoryPortal(data);
    this.stripe = new MemoryStripe(data);
  }

  async ping(): Promise<void> {}

  msSinceDataLoss(): number | null {
    return null;
  }

  close(): Promise<void> {
    return this.data.close();
  }
}
