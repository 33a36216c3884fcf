import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { localTimeToMs } from '../quota/period.js';
import type { Store } from '../store/types.js';
import type { PriceSet } from './schema.js';
import { buildSnapshot, type Snapshot } from './snapshot.js';

// Node timers overflow past 2^31-1 ms; a later switch is re-armed when this one fires.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** South African prices change at 00:01 local time on the effective date. */
export const effectiveMs = (date: string, zone: string): number => localTimeToMs(`${date}T00:01:00`, zone);

/**
 * The price history and the snapshot in effect. It reloads when the store announces a change
 * and switches by itself when a scheduled set's effective time arrives: by timer, and also on
 * the first request past that time, so a late timer never serves an outdated set.
 */
export class PriceBook {
  private history: PriceSet[] = [];
  private times: number[] = [];
  private snapshot: Snapshot | null = null;
  private nextMs = Infinity;
  private timer: unknown;
  private loadsStarted = 0;
  private loadApplied = 0;

  constructor(
    private readonly store: Store,
    private readonly zone: string,
    private readonly defaultSource: string,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** Fills an empty store (a new deployment, or Redis that lost its data) with the shipped history. */
    private readonly seed?: () => Promise<unknown>,
  ) {
    store.subscribe((event) => {
      if (event.type === 'prices') this.load().catch((err: unknown) => log.error({ err }, 'reloading prices failed'));
    });
  }

  async load(): Promise<void> {
    // Loads can overlap (announcements arrive back to back); the one started last read the
    // newest history, so an earlier one that finishes after it must not overwrite it.
    const ticket = ++this.loadsStarted;
    let history = await this.store.listPriceSets();
    if (history.length === 0 && this.seed) {
      await this.seed();
      history = await this.store.listPriceSets();
    }
    if (ticket < this.loadApplied) return;
    this.loadApplied = ticket;
    this.history = history;
    this.times = history.map((s) => effectiveMs(s.effective_date, this.zone));
    this.snapshot = null;
    this.switchTo(this.clock.now());
  }

  /** The snapshot in effect now, or null while no price set is in effect. */
  current(): Snapshot | null {
    const now = this.clock.now();
    if (now >= this.nextMs) this.switchTo(now);
    return this.snapshot;
  }

  /** Sets already in effect (newest last) and those scheduled for later. */
  view(): { current: PriceSet | null; scheduled: PriceSet[]; history: PriceSet[] } {
    const snap = this.current();
    const count = this.countInEffect(this.clock.now());
    return { current: snap?.set ?? null, scheduled: this.history.slice(count), history: this.history.slice(0, count) };
  }

  close(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private countInEffect(now: number): number {
    let n = 0;
    while (n < this.times.length && (this.times[n] as number) <= now) n++;
    return n;
  }

  private switchTo(now: number): void {
    const count = this.countInEffect(now);
    const effective = count > 0 ? (this.times[count - 1] as number) : -Infinity;
    if (count > 0 && this.snapshot?.set !== this.history[count - 1]) {
      this.snapshot = buildSnapshot(this.history.slice(0, count), effective, this.defaultSource);
      this.log.info({ effective_date: this.snapshot.set.effective_date }, 'price snapshot in effect');
    }
    this.nextMs = this.times[count] ?? Infinity;
    this.arm(now);
  }

  private arm(now: number): void {
    this.close();
    if (this.nextMs === Infinity) return;
    const delay = Math.min(Math.max(0, this.nextMs - now), MAX_TIMER_MS);
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.switchTo(this.clock.now());
    }, delay);
  }
}
