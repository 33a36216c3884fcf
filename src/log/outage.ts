import type { Logger } from 'pino';

/** At most one summary line per this while the outage lasts. */
export const SUMMARY_MS = 10_000;

/** What a failed store call cost the request: a 503, an answer served unmetered, or nothing (its answer stood). */
export type OutageCost = 'refused' | 'unmetered' | null;

/**
 * The log of a store outage as the requests see it: one line when the first store call fails, a
 * summary at most every SUMMARY_MS with the answers it cost since the last line, and one line when
 * a store call succeeds again. A line per failed request floods the log at the request rate
 * (docs/performance.md).
 */
export class StoreOutageLog {
  private beganAt: number | null = null;
  private lastError = '';
  private refused = 0;
  private unmetered = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly log: Logger,
    private readonly failOpen: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  failed(err: string, cost: OutageCost): void {
    this.lastError = err;
    if (cost !== null) this[cost]++;
    if (this.beganAt !== null) return;
    this.beganAt = this.now();
    this.log.warn(
      { err },
      this.failOpen
        ? 'store outage began: serving unmetered (store.on_error: allow; keys known as active only)'
        : 'store outage began: answering 503 (store.on_error: reject)',
    );
    this.timer = setInterval(() => this.summary(), SUMMARY_MS).unref();
  }

  /** A store call of a request succeeded. */
  ended(): void {
    if (this.beganAt === null) return;
    this.log.warn(this.costs(), 'store outage ended');
    this.close();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.beganAt = null;
  }

  private summary(): void {
    if (this.refused + this.unmetered === 0) return;
    this.log.warn({ ...this.costs(), err: this.lastError }, 'store outage goes on');
  }

  /** The answers it cost since the last line (and resets them), and how long it has lasted. */
  private costs(): { outage_ms: number; refused: number; unmetered: number } {
    const line = { outage_ms: this.now() - (this.beganAt ?? 0), refused: this.refused, unmetered: this.unmetered };
    this.refused = 0;
    this.unmetered = 0;
    return line;
  }
}
