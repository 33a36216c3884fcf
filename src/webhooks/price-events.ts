import type { Logger } from 'pino';
import { priceEvent } from '../events/price-event-data.js';
import type { BookEvents, Published } from '../prices/book.js';
import type { PriceSet } from '../prices/price-set-schema.js';
import type { EventStore } from '../store/store.js';

/** The parts of PriceEvents: its constructor's options. */
export interface PriceEventsOptions {
  store: EventStore;
  defaultSource: string;
  now: () => number;
  log: Logger;
  /** Called after an event was enqueued: the local worker looks at once. */
  enqueued?: () => void;
}

/**
 * Price changes as webhook events, enqueued in the store's outbox under deterministic ids: a
 * publication or a cancel by the number of its change in the store (one event per change), a
 * set taking effect by its date (every gateway sees it on its own clock; the outbox keeps it once).
 */
export class PriceEvents implements BookEvents {
  private readonly store: EventStore;
  private readonly defaultSource: string;
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly enqueued: () => void;

  constructor(o: PriceEventsOptions) {
    this.store = o.store;
    this.defaultSource = o.defaultSource;
    this.now = o.now;
    this.log = o.log;
    this.enqueued = o.enqueued ?? (() => undefined);
  }

  async published(sets: Published[]): Promise<void> {
    for (const { set, seq } of sets)
      await this.add(priceEvent('prices.published', set, seq, this.defaultSource, this.now()));
  }

  effective(set: PriceSet): void {
    this.add(priceEvent('prices.effective', set, null, this.defaultSource, this.now())).catch((err: unknown) =>
      this.log.error(
        { err: (err as Error).message, effective_date: set.effective_date },
        'could not enqueue the prices.effective event (another gateway may have)',
      ),
    );
  }

  /** A set withdrawn by the change numbered `seq` (PriceStore.deletePriceSet). */
  cancelled(set: PriceSet, seq: number): Promise<void> {
    return this.add(priceEvent('prices.cancelled', set, seq, this.defaultSource, this.now()));
  }

  private async add(event: ReturnType<typeof priceEvent>): Promise<void> {
    if (await this.store.enqueueEvent(event)) this.enqueued();
  }
}
