import type { MemoryData } from '../memory/state.js';
import { type Cursor, emptyCursor, withDeferred, withFailed, withGrowth, withoutEvent, withRetried } from './cursor.js';
import type { BillingEvent, BillingStore, PeriodCounts } from './interface.js';

const keyOf = (exporter: string, accountId: string): string => `${exporter}\u0000${accountId}`;

/** The exporters' cursors in the embedded store: each call is one synchronous step, so atomic. */
export class MemoryBilling implements BillingStore {
  constructor(private readonly data: MemoryData) {}

  async billingPrepare(
    exporter: string,
    accountId: string,
    subject: string,
    timestampMs: number,
  ): Promise<BillingEvent[]> {
    const key = keyOf(exporter, accountId);
    const cursor = this.data.billing.get(key) ?? emptyCursor();
    const next = withGrowth(cursor, this.counts(accountId), exporter, accountId, subject, timestampMs);
    if (next === null) return cursor.outbox;
    this.put(key, next);
    return next.outbox;
  }

  async billingOutstanding(exporter: string): Promise<BillingEvent[]> {
    const out: BillingEvent[] = [];
    for (const [key, c] of this.data.billing)
      if (key.startsWith(`${exporter}\u0000`)) out.push(...c.outbox, ...c.failed);
    return out;
  }

  async billingAck(event: BillingEvent): Promise<void> {
    this.change(event, (c) => withoutEvent(c, event.id));
  }

  async billingDefer(event: BillingEvent, nextMs: number, error: string): Promise<void> {
    this.change(event, (c) => withDeferred(c, event.id, nextMs, error));
  }

  async billingFail(event: BillingEvent, atMs: number, error: string): Promise<void> {
    this.change(event, (c) => withFailed(c, event.id, atMs, error));
  }

  async billingRetry(exporter: string, id: string | null): Promise<number> {
    let count = 0;
    for (const [key, c] of this.data.billing) {
      if (!key.startsWith(`${exporter}\u0000`)) continue;
      const r = withRetried(c, id);
      if (r === null) continue;
      this.put(key, r.cursor);
      count += r.count;
    }
    return count;
  }

  private counts(accountId: string): PeriodCounts {
    const now = this.data.now();
    const out: PeriodCounts = [];
    for (const [period, c] of this.data.counters.get(accountId) ?? [])
      if (c.expireAtMs > now) out.push([period, c.used]);
    return out;
  }

  private change(event: BillingEvent, step: (c: Cursor) => Cursor | null): void {
    const key = keyOf(event.exporter, event.account_id);
    const cursor = this.data.billing.get(key);
    const next = cursor === undefined ? null : step(cursor);
    if (next !== null) this.put(key, next);
  }

  private put(key: string, cursor: Cursor): void {
    // A settled cursor still holds `sent` and `seen`: it is the exporter's place in the ledger.
    this.data.billing.set(key, cursor);
    this.data.countersDirty = true;
  }
}
