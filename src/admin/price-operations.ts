import type { Clock } from '../clock.js';
import { GatewayError } from '../failures.js';
import type { PriceBook } from '../prices/book.js';
import { withUpdatedAt } from '../prices/price-file.js';
import type { PriceSet, PriceSetDocument, PublishInput } from '../prices/price-set-schema.js';
import type { PriceStore } from '../store/store.js';
import { formatInZone } from '../time/zone.js';
import type { Audit } from './audit.js';

type PriceStatus = 'current' | 'scheduled' | 'past';

export interface PriceOperationsDeps {
  /** Withdraws a scheduled set; publishing goes through the book, which announces it. */
  prices: PriceStore;
  book: PriceBook;
  /** The zone `updated_at` is written in when a set comes without one. */
  zone: string;
  clock: Clock;
  audit: Audit;
  /** Tells of a cancelled set (a prices.cancelled webhook event). */
  events?: { cancelled(set: PriceSet, seq: number): Promise<void> } | undefined;
}

/** Price sets, for `/admin/prices…` and `prices …` alike. Every change writes one audit line. */
export class PriceOperations {
  private readonly store: PriceStore;
  private readonly book: PriceBook;
  private readonly zone: string;
  private readonly clock: Clock;
  private readonly audit: Audit;
  private readonly events: PriceOperationsDeps['events'];

  constructor(deps: PriceOperationsDeps) {
    this.store = deps.prices;
    this.book = deps.book;
    this.zone = deps.zone;
    this.clock = deps.clock;
    this.audit = deps.audit;
    this.events = deps.events;
  }

  /**
   * Stores a price set (replacing one of the same date), or a history document (an array of
   * sets, like the shipped file) in one store call with one announcement, so no instance serves
   * one of its sets as current on the way. Every instance reloads. The entry's schema
   * (`publishInput`) has checked it.
   */
  publishPrices(
    body: PublishInput,
    from: string,
  ): Promise<
    { status: PriceStatus; price_set: PriceSet } | { published: Array<{ effective_date: string; status: PriceStatus }> }
  > {
    return Array.isArray(body) ? this.publishHistory(body, from) : this.publishSet(body, from);
  }

  /**
   * Withdraws a set that is still scheduled. One already in effect (or served as current) is
   * refused with CONFLICT: requests were answered with it, so correct it by publishing a set of
   * the same date instead.
   */
  async cancelPrices(d: string, from: string): Promise<{ price_set: PriceSet }> {
    // The newest history, not this process's copy: another instance may have just published.
    await this.book.load();
    const set = this.book.find(d);
    if (!set) throw new GatewayError('NOT_FOUND', `no price set for ${d}`);
    if (this.statusOf(d) !== 'scheduled')
      throw new GatewayError(
        'CONFLICT',
        `the price set of ${d} is already in effect; publish a corrected set for ${d} instead`,
      );
    const change = await this.store.deletePriceSet(d);
    if (!change) throw new GatewayError('NOT_FOUND', `no price set for ${d}`);
    await this.events?.cancelled(set, change.seq);
    await this.book.load();
    this.audit({ action: 'prices.cancel', effective_date: d, from });
    return { price_set: set };
  }

  prices(): { current: PriceSet | null; scheduled: PriceSet[] } {
    const { current, scheduled } = this.book.view();
    return { current, scheduled };
  }

  /** Sets that have been in effect, oldest first. */
  priceHistory(): { history: PriceSet[] } {
    return { history: this.book.view().history };
  }

  private async publishSet(doc: PriceSetDocument, from: string): Promise<{ status: PriceStatus; price_set: PriceSet }> {
    const updatedAt = doc.updated_at ?? formatInZone(this.clock.now(), this.zone).slice(0, 19).replace('T', ' ');
    const set: PriceSet = { ...doc, updated_at: updatedAt };
    await this.book.publish(set);
    this.audit({ action: 'prices.publish', effective_date: set.effective_date, from });
    return { status: this.statusOf(set.effective_date), price_set: set };
  }

  /** Sets without `updated_at` get their effective time, as when the shipped file is loaded. */
  private async publishHistory(
    body: PriceSetDocument[],
    from: string,
  ): Promise<{ published: Array<{ effective_date: string; status: PriceStatus }> }> {
    const sets = withUpdatedAt(body);
    await this.book.publishMany(sets);
    const dates = sets.map((s) => s.effective_date);
    this.audit({ action: 'prices.publish', effective_dates: dates, from });
    return { published: dates.map((d) => ({ effective_date: d, status: this.statusOf(d) })) };
  }

  private statusOf(date: string): PriceStatus {
    const view = this.book.view();
    return view.current?.effective_date === date
      ? 'current'
      : view.scheduled.some((s) => s.effective_date === date)
        ? 'scheduled'
        : 'past';
  }
}
