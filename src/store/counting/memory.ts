import { firstCount, reached, thresholdEvent } from '../../events/event.js';
import type { StoredAccount } from '../accounts/interface.js';
import { enqueueInMemory } from '../events/memory.js';
import { type Counter, type MemoryData, newCounter } from '../memory/state.js';
import type { ConsumeReceiver, ConsumeResult, ConsumeSpec, CountingStore } from './interface.js';

const SWEEP_EVERY = 10_000;

/**
 * What a spec's consume resolved to: its account and counter, valid while no account has changed
 * since (`epoch`) and the counter has not expired. With 10,000 accounts the three map lookups it
 * saves cost a warm request about 1 µs in cache misses.
 */
class Slot {
  constructor(
    readonly store: MemoryCounting,
    readonly epoch: number,
    readonly account: StoredAccount,
    readonly counter: Counter,
  ) {}
}

const CHANGED: ConsumeResult = Object.freeze({ kind: 'changed' });
const INACTIVE: ConsumeResult = Object.freeze({ kind: 'inactive' });

/**
 * The counters of the embedded store. Every operation completes synchronously, which is what
 * makes `consume` atomic here; expired counters are swept lazily rather than by timers per key.
 */
export class MemoryCounting implements CountingStore {
  private insertsSinceSweep = 0;

  constructor(private readonly data: MemoryData) {}

  async consume(spec: ConsumeSpec): Promise<ConsumeResult> {
    return this.consumeNow(spec);
  }

  consumeInto(spec: ConsumeSpec, receiver: ConsumeReceiver): void {
    receiver.consumed(this.consumeNow(spec));
  }

  async refund(accountId: string, periodId: string): Promise<void> {
    const counter = this.data.counters.get(accountId)?.get(periodId);
    if (counter && counter.used > 0) {
      counter.used -= 1;
      this.data.countersDirty = true;
    }
  }

  async usage(accountId: string, periodId: string): Promise<number> {
    const counter = this.data.counters.get(accountId)?.get(periodId);
    return counter && counter.expireAtMs > this.data.now() ? counter.used : 0;
  }

  private consumeNow(spec: ConsumeSpec): ConsumeResult {
    const slot = this.slotOf(spec, this.data.now());
    if (slot === null) return CHANGED;
    if (slot.account.status !== 'active') return INACTIVE;
    const counter = slot.counter;
    const alerts = spec.alerts;
    if (counter.used >= spec.limit) {
      if (alerts !== undefined && counter.used >= alerts.next) this.cross(spec, counter);
      return { kind: 'exhausted', used: counter.used };
    }
    counter.used += 1;
    this.data.countersDirty = true;
    if (alerts !== undefined && counter.used >= alerts.next) this.cross(spec, counter);
    return { kind: 'ok', used: counter.used };
  }

  /**
   * The count reached thresholds of the spec: each not yet raised in the period goes to the
   * outbox, in the same synchronous step as the count (so once, and never again after a refund).
   */
  private cross(spec: ConsumeSpec, counter: Counter): void {
    const alerts = spec.alerts;
    if (alerts === undefined) return;
    const { crossed, rest } = reached(alerts.list, counter.used);
    alerts.list = rest;
    alerts.next = firstCount(rest);
    for (const [, percent] of crossed) {
      if (counter.alerted.includes(percent)) continue;
      counter.alerted.push(percent);
      const crossing = {
        accountId: spec.accountId,
        periodId: spec.periodId,
        percent,
        used: counter.used,
        limit: spec.limit,
      };
      enqueueInMemory(this.data, thresholdEvent(crossing, alerts.context, this.data.now()));
    }
  }

  // Crossings go to the outbox in the step that counts: none is ever left behind.
  async recoverCrossings(): Promise<number> {
    return 0;
  }

  /** The account and live counter of a spec, or null when its account is gone or at another revision. */
  private slotOf(spec: ConsumeSpec, now: number): Slot | null {
    const d = this.data;
    const memo = spec.storeMemo;
    if (memo instanceof Slot && memo.store === this && memo.epoch === d.epoch && memo.counter.expireAtMs > now)
      return memo;
    const account = d.accounts.get(spec.accountId);
    if (!account || account.revision !== spec.revision) return null;
    let periods = d.counters.get(spec.accountId);
    if (!periods) {
      periods = new Map();
      d.counters.set(spec.accountId, periods);
    }
    let counter = periods.get(spec.periodId);
    if (!counter || counter.expireAtMs <= now) {
      counter = newCounter(spec.accountId, spec.periodId, 0, spec.expireAtMs);
      periods.set(spec.periodId, counter);
      if (++this.insertsSinceSweep >= SWEEP_EVERY) this.sweep(now);
    }
    const slot = new Slot(this, d.epoch, account, counter);
    spec.storeMemo = slot;
    return slot;
  }

  private sweep(now: number): void {
    this.insertsSinceSweep = 0;
    for (const [account, periods] of this.data.counters) {
      for (const [period, c] of periods) if (c.expireAtMs <= now) periods.delete(period);
      if (periods.size === 0) this.data.counters.delete(account);
    }
  }
}
