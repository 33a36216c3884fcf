import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config-schema.js';
import type { CoordinationStore, PriceChange, PriceStore } from '../store/store.js';
import { localTimeToMs } from '../time/zone.js';
import type { PriceSet } from './price-set-schema.js';
import { buildSnapshot, type CurrentPrices, EMPTY_SNAPSHOT, type Snapshot } from './snapshot.js';

// Node timers overflow past 2^31-1 ms; a later switch is re-armed when this one fires.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** South African prices change at 00:01 local time on the effective date. */
export const effectiveMs = (date: string, zone: string): number => localTimeToMs(`${date}T00:01:00`, zone);

/** The book's settings from the config: in front of an origin, only its sets are current. */
export const bookOptions = (config: Config): PriceBookOptions => ({
  zone: config.time_zone,
  defaultSource: config.prices.source_name,
  upstreamOnly: config.upstream.url !== '',
});

/** The parts of a PriceBook: its constructor's options. */
export interface PriceBookParts {
  /** The history (prices) and its announcements from other instances (coordination). */
  store: { prices: PriceStore; coordination: CoordinationStore };
  options: PriceBookOptions;
  clock: Clock;
  log: Logger;
  /** Fills an empty store (a new deployment, or Redis that lost its data) with the shipped history. */
  seed?: () => Promise<unknown>;
  events?: BookEvents;
}

/** A set stored by `publish`/`publishMany`, with the store's number for that change. */
export interface Published {
  set: PriceSet;
  seq: number;
}

/** What the book tells of price changes (webhooks/price-events.ts turns them into events). */
export interface BookEvents {
  /**
   * Sets stored by `publish`/`publishMany` (the admin API, the CLI, the origin poller) that
   * changed the history: told by the one process whose store call made the change.
   */
  published(sets: Published[]): Promise<void>;
  /** A set whose effective time has come, seen by this process within a day of it. */
  effective(set: PriceSet): void;
}

// A set whose effective time is older than this when a process first sees it in effect (it
// was down at the time) is not announced as taking effect: that news is stale.
const EFFECTIVE_NEWS_MS = 86_400_000;

export interface PriceBookOptions {
  zone: string;
  defaultSource: string;
  /** In front of an origin only a set obtained from it is served as current (never a shipped one). */
  upstreamOnly: boolean;
}

/**
 * The price history and the snapshot in effect. It reloads when the store announces a change
 * and switches by itself when a scheduled set's effective time arrives: by timer, and also on
 * the first request past that time, so a late timer never serves an outdated set.
 *
 * One rule decides what every view shows (current.php, GET /admin/prices, /readyz,
 * historical.php, changes.php): the set served as current is in effect, and so is every set
 * dated before it and every set whose effective time (00:01 local on its date) has come. Those
 * are the history; the rest are scheduled. Without an origin the set served as current is the
 * newest whose time has come, so this is the date rule. In front of an origin it is the newest
 * set the origin called current, whatever its date (see currentOf): a set the origin serves
 * before its date is current, and in the history, from the moment the gateway has it, never
 * scheduled. Its age (/readyz `age_days`, the age metric) counts from its effective time and is
 * 0 until that time: the prices are as fresh as they come, and a negative age would read as a
 * clock fault.
 */
export class PriceBook {
  private history: PriceSet[] = [];
  private times: number[] = [];
  /** In front of an origin: how many sets, oldest first, run up to the origin's newest (in effect, whatever the date). */
  private servedUpTo = 0;
  private snap: Snapshot = EMPTY_SNAPSHOT;
  /** How many sets of the history the snapshot was built from; -1 forces a rebuild. */
  private builtCount = -1;
  private nextMs = Infinity;
  private timer: unknown;
  private loadsStarted = 0;
  private loadApplied = 0;
  /** Dates whose taking effect this process has told of. */
  private readonly announced = new Set<string>();
  /** Told of each snapshot as it comes into effect (`watch`). */
  private readonly watchers: ((snap: Snapshot, now: number) => void)[] = [];

  private readonly prices: PriceStore;

  private readonly opts: PriceBookOptions;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly seed: (() => Promise<unknown>) | undefined;
  private readonly events: BookEvents | undefined;

  constructor(parts: PriceBookParts) {
    const { prices, coordination } = parts.store;
    const log = parts.log;
    this.prices = prices;
    this.opts = parts.options;
    this.clock = parts.clock;
    this.log = log;
    this.seed = parts.seed;
    this.events = parts.events;
    coordination.subscribe((event) => {
      if (event.type === 'prices') this.load().catch((err: unknown) => log.error({ err }, 'reloading prices failed'));
    });
  }

  async load(): Promise<void> {
    // Loads can overlap (announcements arrive back to back); the one started last read the
    // newest history, so an earlier one that finishes after it must not overwrite it.
    const ticket = ++this.loadsStarted;
    let history = await this.prices.listPriceSets();
    if (history.length === 0 && this.seed) {
      await this.seed();
      history = await this.prices.listPriceSets();
    }
    if (ticket < this.loadApplied) return;
    this.loadApplied = ticket;
    this.history = history;
    this.times = history.map((s) => effectiveMs(s.effective_date, this.opts.zone));
    this.servedUpTo = 0;
    if (this.opts.upstreamOnly)
      for (let i = history.length; i > 0 && this.servedUpTo === 0; i--)
        if ((history[i - 1] as PriceSet).origin === 'upstream') this.servedUpTo = i;
    this.builtCount = -1;
    this.switchTo(this.clock.now());
  }

  /**
   * Stores a set (replacing one of the same date) and reloads: the one way a set is published,
   * by an operator or by the upstream poller. Every other instance reloads on the announcement.
   */
  async publish(set: PriceSet): Promise<void> {
    const change = await this.prices.putPriceSet(set, true);
    if (change) await this.events?.published([{ set, seq: change.seq }]);
    await this.load();
  }

  /** `publish` for many sets: stored and announced at once, so none is current on the way. */
  async publishMany(sets: PriceSet[]): Promise<void> {
    const changes = await this.prices.putPriceSets(sets, true);
    const byDate = new Map(sets.map((s) => [s.effective_date, s]));
    const told = changes.flatMap((c: PriceChange) => {
      const set = byDate.get(c.effective_date);
      return set ? [{ set, seq: c.seq }] : [];
    });
    if (told.length > 0) await this.events?.published(told);
    await this.load();
  }

  /** The snapshot in effect now. */
  snapshot(): Snapshot {
    const now = this.clock.now();
    if (now >= this.nextMs) this.switchTo(now);
    return this.snap;
  }

  /**
   * Calls `fn` with the snapshot in effect now, then with each one that comes into effect (a set
   * published or reloaded, or its effective time come): for what is built once per snapshot.
   */
  watch(fn: (snap: Snapshot, now: number) => void): void {
    this.watchers.push(fn);
    fn(this.snapshot(), this.clock.now());
  }

  /** The prices served as current, or null while there are none. */
  current(): CurrentPrices | null {
    return this.snapshot().current;
  }

  /** The stored set for an effective date, in effect or scheduled. */
  find(date: string): PriceSet | undefined {
    return this.history.find((s) => s.effective_date === date);
  }

  /** Sets already in effect (newest last) and those scheduled for later. */
  view(): { current: PriceSet | null; scheduled: PriceSet[]; history: PriceSet[] } {
    const current = this.current();
    const count = this.countInEffect(this.clock.now());
    return {
      current: current?.set ?? null,
      scheduled: this.history.slice(count),
      history: this.history.slice(0, count),
    };
  }

  close(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** How many sets, oldest first, are in effect at `now` (the rule above). */
  private countInEffect(now: number): number {
    let n = 0;
    while (n < this.times.length && (this.times[n] as number) <= now) n++;
    return Math.max(n, this.servedUpTo);
  }

  private switchTo(now: number): void {
    const count = this.countInEffect(now);
    if (count !== this.builtCount) {
      this.builtCount = count;
      const previous = this.snap.current?.set;
      this.snap = buildSnapshot(this.history.slice(0, count), this.currentOf(count), this.opts.defaultSource);
      const set = this.snap.current?.set;
      if (set && set !== previous) this.log.info({ effective_date: set.effective_date }, 'price snapshot in effect');
      for (const fn of this.watchers) fn(this.snap, now);
    }
    this.nextMs = this.times[count] ?? Infinity;
    this.arm(now);
    if (this.events) this.tellEffective(now);
  }

  /** Sets whose effective time has come within the last day and that this process has not told of. */
  private tellEffective(now: number): void {
    for (let i = this.times.length - 1; i >= 0; i--) {
      const at = this.times[i] as number;
      if (at > now) continue;
      if (at <= now - EFFECTIVE_NEWS_MS) break;
      const set = this.history[i] as PriceSet;
      if (this.announced.has(set.effective_date)) continue;
      this.announced.add(set.effective_date);
      this.events?.effective(set);
    }
  }

  /**
   * The set served as current: the newest of the first `count` (those in effect). In front of an
   * origin, the newest set the origin called current, whatever its date: the origin is the
   * authority on what is current, even when its clock or early publication runs ahead of ours.
   */
  private currentOf(count: number): { set: PriceSet; effectiveMs: number } | null {
    const i = this.opts.upstreamOnly ? this.servedUpTo - 1 : count - 1;
    return i < 0 ? null : { set: this.history[i] as PriceSet, effectiveMs: this.times[i] as number };
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
