import type { ThresholdContext } from '../events/event.js';
import type { Alerts, BurstSpec, ConsumeSpec, PeriodMeta, Threshold } from '../store/store.js';
import { formatInZone } from '../time/zone.js';
import type { Allowance } from './allowance.js';
import type { Period, PeriodKind } from './period.js';

const NONE: readonly Threshold[] = [];

/**
 * What a consume for a cached account asks the store, as one object per account and period that
 * is also its alerts (`alerts` is the spec itself when a threshold applies) and their context.
 * The spec, its period's record, its alerts and their context were four objects per cached
 * account, and the record and the context repeated the allowance's period and plan: read here
 * from the allowance instead (docs/performance.md, the account cache at scale). The record and
 * the context are read when a period's first request is written and when a threshold is
 * crossed, not per request.
 */
export class EntrySpec implements ConsumeSpec, Alerts, ThresholdContext {
  readonly accountId: string;
  readonly revision: number;
  readonly expireAtMs: number;
  readonly burst: BurstSpec | undefined;
  alerts: Alerts | undefined = undefined;
  /** The thresholds not yet reached, when `alerts` is this spec (Alerts). */
  pending: readonly Threshold[] = NONE;
  next = Infinity;
  storeMemo: object | undefined = undefined;
  touch: string | undefined = undefined;
  load: boolean | undefined = undefined;

  constructor(
    accountId: string,
    revision: number,
    private readonly allowance: Allowance,
    retentionMs: number,
  ) {
    this.accountId = accountId;
    this.revision = revision;
    this.expireAtMs = allowance.period.endMs + retentionMs;
    const { burst } = allowance;
    this.burst = burst === null ? undefined : { limit: burst.limit, windowMs: burst.window_s * 1000 };
  }

  /** Counts at which a threshold is raised: this spec becomes its own `alerts` (none: it stays undefined). */
  alertAt(pending: readonly Threshold[]): void {
    if (pending.length === 0) return;
    this.pending = pending;
    this.next = (pending[0] as Threshold).count;
    this.alerts = this;
  }

  get periodId(): string {
    return this.allowance.period.id;
  }
  get limit(): number {
    return this.allowance.limit;
  }
  get cap(): number {
    return this.allowance.cap;
  }
  get record(): PeriodMeta {
    const { plan, period } = this.allowance;
    return { plan, kind: period.kind, startMs: period.startMs, endMs: period.endMs };
  }
  get context(): ThresholdContext {
    return this;
  }
  get plan(): string {
    return this.allowance.plan;
  }
  get period_started_at(): string {
    return this.allowance.period.startedAt;
  }
  get period_ends_at(): string {
    return this.allowance.period.endsAt;
  }
}

/**
 * A cached account's period without its two dates as strings: they are written out when read
 * (usage history, a threshold's event), not held by every cached account. The usage fragments'
 * tail, built once with the entry, carries them for the answers.
 */
export class LeanPeriod implements Period {
  readonly kind: PeriodKind;
  readonly id: string;
  readonly startMs: number;
  readonly endMs: number;

  constructor(
    p: Period,
    private readonly zone: string,
  ) {
    this.kind = p.kind;
    this.id = p.id;
    this.startMs = p.startMs;
    this.endMs = p.endMs;
  }

  get startedAt(): string {
    return formatInZone(this.startMs, this.zone);
  }
  get endsAt(): string {
    return formatInZone(this.endMs, this.zone);
  }
}
