import { thresholdEvent } from '../../events/event.js';
import type { StoredAccount } from '../accounts/interface.js';
import { copyAccount } from '../accounts/memory.js';
import { enqueueInMemory } from '../events/memory.js';
import { type Counter, type LedgerRecord, type MemoryData, newCounter } from '../memory/state.js';
import { dropReached } from './alerts.js';
import type {
  BurstSpec,
  BurstState,
  ConsumeReceiver,
  ConsumeResult,
  ConsumeSpec,
  CountingStore,
  PeriodRecord,
} from './interface.js';
import { byStart } from './period-records.js';

const SWEEP_EVERY = 10_000;

/**
 * What a spec's consume resolved to: its account and counter, valid while no account has changed
 * since (`epoch`) and the counter has not expired. With many accounts the three map look-ups it
 * saves cost a warm request in cache misses (docs/performance.md).
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
  /** The burst logs (lua.ts BURST), per account. */
  private readonly admitted = new Map<string, BurstLog>();

  constructor(private readonly data: MemoryData) {}

  async consume(spec: ConsumeSpec, day: string): Promise<ConsumeResult> {
    return this.consumeNow(spec, day);
  }

  consumeInto(spec: ConsumeSpec, day: string, receiver: ConsumeReceiver): void {
    receiver.consumed(this.consumeNow(spec, day));
  }

  async refund(accountId: string, periodId: string, day: string): Promise<void> {
    const counter = this.data.counters.get(accountId)?.get(periodId);
    if (counter && counter.used > 0) {
      counter.used -= 1;
      const n = counter.days.get(day) ?? 0;
      if (n > 0) counter.days.set(day, n - 1);
      this.data.countersDirty = true;
    }
  }

  async periodRecords(accountIds: string[], fromMs: number, toMs: number): Promise<PeriodRecord[][]> {
    const now = this.data.now();
    return accountIds.map((id) => {
      const out: PeriodRecord[] = [];
      for (const [periodId, c] of this.data.counters.get(id) ?? []) {
        const r = c.record;
        if (r === null || c.expireAtMs <= now || r.startMs >= toMs || r.endMs <= fromMs) continue;
        const days = [...c.days].filter(([, n]) => n > 0).sort((a, b) => (a[0] < b[0] ? -1 : 1));
        out.push({ periodId, ...r, granted: r.granted ?? 0, used: c.used, days, changes: [...r.changes] });
      }
      return out.sort(byStart);
    });
  }

  async recordPlanChange(
    accountId: string,
    periodId: string,
    atMs: number,
    now: { plan: string; limit: number; endMs: number },
  ): Promise<void> {
    const counter = this.data.counters.get(accountId)?.get(periodId);
    const r = counter?.record;
    if (!counter || !r) return;
    r.changes.push({ atMs, plan: r.plan, limit: r.limit, used: counter.used });
    r.plan = now.plan;
    r.limit = now.limit;
    r.endMs = now.endMs;
    this.data.countersDirty = true;
  }

  async usage(accountId: string, periodId: string): Promise<number> {
    const counter = this.data.counters.get(accountId)?.get(periodId);
    return counter && counter.expireAtMs > this.data.now() ? counter.used : 0;
  }

  private consumeNow(spec: ConsumeSpec, day: string): ConsumeResult {
    if (spec.load !== true) return this.countNow(spec, day);
    spec.load = undefined;
    const result = this.countNow(spec, day);
    const stored = this.data.accounts.get(spec.accountId);
    if (result.kind === 'inactive' || result.kind === 'changed' || stored === undefined) return result;
    return { ...result, account: copyAccount(stored) };
  }

  private countNow(spec: ConsumeSpec, day: string): ConsumeResult {
    const slot = this.slotOf(spec, this.data.now());
    if (slot === null) return CHANGED;
    if (spec.touch !== undefined && (slot.account.status !== 'active' || slot.counter.used >= spec.limit))
      spec.touch = undefined;
    if (slot.account.status !== 'active') return INACTIVE;
    const counter = slot.counter;
    const alerts = spec.alerts;
    const burst = spec.burst;
    const log = burst === undefined ? undefined : this.logOf(spec.accountId, burst.windowMs);
    if (counter.used >= (spec.cap ?? spec.limit)) {
      if (alerts !== undefined && counter.used >= alerts.next) this.cross(spec, counter);
      if (log === undefined || burst === undefined) return { kind: 'exhausted', used: counter.used };
      return { kind: 'exhausted', used: counter.used, burst: log.state(burst, this.data.now()) };
    }
    if (log !== undefined && burst !== undefined) {
      if (log.held() >= burst.limit)
        return { kind: 'burst', used: counter.used, burst: log.state(burst, this.data.now()) };
      log.add(this.data.now());
    }
    counter.used += 1;
    // The ledger, in the same synchronous step: the days of a period sum to its counter.
    counter.days.set(day, (counter.days.get(day) ?? 0) + 1);
    counter.record ??= recordOf(spec);
    this.data.countersDirty = true;
    if (spec.touch !== undefined) this.touch(slot.account, spec, day);
    if (alerts !== undefined && counter.used >= alerts.next) this.cross(spec, counter);
    if (log === undefined || burst === undefined) return { kind: 'ok', used: counter.used };
    return { kind: 'ok', used: counter.used, burst: log.state(burst, this.data.now()) };
  }

  /** The account's burst log, rid of the admissions that left the window. */
  private logOf(accountId: string, windowMs: number): BurstLog {
    let log = this.admitted.get(accountId);
    if (log === undefined) {
      log = new BurstLog();
      this.admitted.set(accountId, log);
    }
    log.drop(this.data.now() - windowMs);
    return log;
  }

  /** The day a key last worked, noted in the same synchronous step that counts (ConsumeSpec.touch). */
  private touch(account: StoredAccount, spec: ConsumeSpec, day: string): void {
    const key = account.keys.find((k) => k.id === spec.touch);
    spec.touch = undefined;
    if (key === undefined || (key.last_used_on !== null && key.last_used_on >= day)) return;
    key.last_used_on = day;
    this.data.touchAccount(account);
  }

  /**
   * The count reached thresholds of the spec: each not yet raised in the period goes to the
   * outbox, in the same synchronous step as the count (so once, and never again after a refund).
   */
  private cross(spec: ConsumeSpec, counter: Counter): void {
    const alerts = spec.alerts;
    if (alerts === undefined) return;
    for (const { percent } of dropReached(alerts, counter.used)) {
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

/** Times of an account's admitted requests in its burst window, oldest first (lua.ts BURST). */
class BurstLog {
  private times: number[] = [];
  private head = 0;

  held(): number {
    return this.times.length - this.head;
  }

  add(now: number): void {
    this.times.push(now);
  }

  /** Forgets the admissions at or before `until`. */
  drop(until: number): void {
    while (this.head < this.times.length && (this.times[this.head] as number) <= until) this.head++;
    // Compacted in bulk, so an admission is moved about once.
    if (this.head > 64 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
  }

  state(burst: BurstSpec, now: number): BurstState {
    const oldest = this.times[this.head];
    return {
      remaining: Math.max(0, burst.limit - this.held()),
      resetMs: oldest === undefined ? 0 : Math.max(1, Math.ceil(oldest + burst.windowMs - now)),
    };
  }
}

function recordOf(spec: ConsumeSpec): LedgerRecord {
  const r = spec.record;
  return {
    plan: r?.plan ?? '',
    kind: r?.kind ?? 'monthly',
    limit: spec.limit,
    startMs: r?.startMs ?? 0,
    endMs: r?.endMs ?? spec.expireAtMs,
    changes: [],
  };
}
