import type { Logger } from 'pino';

/** At most one summary line per this while the outage lasts. */
export const SUMMARY_MS = 10_000;

/** The three lines of an outage. */
export interface OutageLines {
  began: string;
  goesOn: string;
  ended: string;
}

/**
 * The log of an outage as a caller that keeps running into it sees it: one line at the first
 * failure, a summary at most every SUMMARY_MS with what it cost since the last line (counted per
 * kind of `C`), and one line once calls work again. A line per failure floods the log at the
 * rate of the requests or of the loop that fails (docs/performance.md).
 *
 * With `settleMs`, the outage ends only when no call has failed for that long after a success:
 * calls that were under way when the store came back, and fail a moment later, belong to the
 * outage that let them fail, not to a new one (an outage would end and begin again within
 * milliseconds).
 */
export class OutageLog<C extends string> {
  private beganAt: number | null = null;
  private lastError = '';
  private counts: Record<C, number>;
  private timer: NodeJS.Timeout | null = null;
  /** A call worked: the end line waits for `settleMs` without a failure. */
  private ending: { at: number; timer: NodeJS.Timeout } | null = null;

  constructor(
    private readonly log: Logger,
    private readonly kinds: readonly C[],
    private readonly lines: OutageLines,
    private readonly now: () => number = Date.now,
    private readonly settleMs = 0,
  ) {
    this.counts = this.zero();
  }

  failed(err: string, cost: C | null): void {
    this.lastError = err;
    if (cost !== null) this.counts[cost]++;
    if (this.ending) clearTimeout(this.ending.timer);
    this.ending = null;
    if (this.beganAt !== null) return;
    this.beganAt = this.now();
    this.log.warn({ err }, this.lines.began);
    this.timer = setInterval(() => this.summary(), SUMMARY_MS).unref();
  }

  /** A call succeeded. */
  ended(): void {
    if (this.beganAt === null || this.ending) return;
    const at = this.now();
    if (this.settleMs === 0) return this.end(at);
    this.ending = { at, timer: setTimeout(() => this.end(at), this.settleMs).unref() };
  }

  /**
   * The process stops: what the outage cost since its last line is logged, with the end line if
   * calls had worked again, so that no refused answer goes unlogged.
   */
  close(): void {
    if (this.ending) return this.end(this.ending.at);
    if (this.beganAt !== null) this.summary();
    this.stop();
  }

  private end(at: number): void {
    this.log.warn(this.costs(at), this.lines.ended);
    this.stop();
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.ending) clearTimeout(this.ending.timer);
    this.timer = null;
    this.ending = null;
    this.beganAt = null;
  }

  private summary(): void {
    if (this.kinds.every((k) => this.counts[k] === 0)) return;
    this.log.warn({ ...this.costs(this.now()), err: this.lastError }, this.lines.goesOn);
  }

  /** What it cost since the last line (and resets it), and how long it had lasted `at`. */
  private costs(at: number): Record<string, number> {
    const line: Record<string, number> = { outage_ms: at - (this.beganAt ?? 0), ...this.counts };
    this.counts = this.zero();
    return line;
  }

  private zero(): Record<C, number> {
    return Object.fromEntries(this.kinds.map((k) => [k, 0])) as Record<C, number>;
  }
}

/** What a failed store call cost the request: a 503, an answer served unmetered, or nothing (its answer stood). */
export type OutageCost = 'refused' | 'unmetered' | null;

/**
 * Requests under way when the store came back may still fail for up to their command timeout,
 * and later on a loaded machine (seen: 7 of 8 in flight, at load 11): they end within this.
 */
export const STORE_SETTLE_MS = 1_000;

/** A store outage as the requests see it. */
export class StoreOutageLog extends OutageLog<'refused' | 'unmetered'> {
  constructor(log: Logger, failOpen: boolean, now: () => number = Date.now) {
    super(
      log,
      ['refused', 'unmetered'],
      {
        began: failOpen
          ? 'store outage began: serving unmetered (store.on_error: allow; keys known as active only)'
          : 'store outage began: answering 503 (store.on_error: reject)',
        goesOn: 'store outage goes on',
        ended: 'store outage ended',
      },
      now,
      STORE_SETTLE_MS,
    );
  }
}
