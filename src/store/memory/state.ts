import type { PriceSet } from '../../prices/price-set-schema.js';
import type { StoredAccount } from '../accounts/interface.js';
import type { Cursor } from '../billing/cursor.js';
import type { StoreEvent } from '../coordination/interface.js';
import type { PlanChange } from '../counting/interface.js';
import type { Delivery, Endpoint } from '../events/interface.js';
import { keysOf } from '../keys/key-record.js';
import type { Member, Passkey, SignUp } from '../portal/interface.js';
import { StripeMemoryState } from '../stripe/memory-state.js';
import { type MemoryState, readState, type StateParts, StateWriter } from './state-file.js';

// Counters reach the file at most this long after they change (accounts and prices at once).
const COUNTER_FLUSH_MS = 1000;

/** A period's record in the ledger (store/counting/interface.ts PeriodRecord, without what is counted). */
export interface LedgerRecord {
  plan: string;
  kind: 'trial' | 'monthly';
  limit: number;
  startMs: number;
  endMs: number;
  changes: PlanChange[];
  /** Requests granted in the period; absent: none (and in files written before grants). */
  granted?: number;
}

/** A webhook delivery in the memory store, with its claim. */
export interface MemoryDelivery extends Delivery {
  holder: string | null;
  /** Due again (claimed: when the claim runs out); for pending deliveries only. */
  due_ms: number | null;
  /** Forgotten after this (delivered or failed ones). */
  forget_ms: number | null;
}

export interface Counter {
  used: number;
  expireAtMs: number;
  /** The period's ledger: requests by day (YYYY-MM-DD), counted with `used`. */
  days: Map<string, number>;
  /** Written by the period's first counted request. */
  record: LedgerRecord | null;
  /** The counter in the state file up to its count, encoded once: a write appends `used…}`. */
  json: string;
  /** Thresholds (percent) already raised in this period: each is raised once. */
  alerted: number[];
}

export function newCounter(
  account: string,
  period: string,
  used: number,
  expireAtMs: number,
  alerted: number[] = [],
): Counter {
  const json = `{"account":${JSON.stringify(account)},"period":${JSON.stringify(period)},"expire_at_ms":${expireAtMs},"used":`;
  return { used, expireAtMs, days: new Map(), record: null, json, alerted };
}

/** A counter's entry in the state file: its count, then its days, record and raised thresholds when it has them. */
function counterJson(c: Counter): string {
  const ledger =
    c.record === null && c.days.size === 0
      ? ''
      : `,"days":${JSON.stringify(Object.fromEntries(c.days))},"record":${JSON.stringify(c.record)}`;
  return `${c.json}${c.used}${ledger}${c.alerted.length === 0 ? '' : `,"alerted":[${c.alerted.join(',')}]`}}`;
}

/**
 * The embedded single-process store's data, shared by its concerns (memory-store.ts builds the
 * store from them). A counter is checked against its account in the same synchronous step that
 * counts it, which is why the concerns share one set of maps rather than each keeping its own. With a `file`, it survives restarts: a change of accounts or
 * prices resolves once it is on disk, counters reach the disk at most a second later and
 * completely on `close` (SIGTERM). A crash can lose that last second of counts. Writes run off
 * the event loop (StateWriter).
 */
export class MemoryData {
  readonly accounts = new Map<string, StoredAccount>();
  /** Deleted accounts as they were, kept until their last period record expires (`untilMs`). */
  readonly deleted = new Map<string, { account: StoredAccount; untilMs: number }>();
  readonly byKeyHash = new Map<string, string>();
  /**
   * Counters by account, then period. Two lookups by strings the caller keeps (its spec's), whose
   * hashes V8 caches, cost less than one by a key built per request.
   */
  readonly counters = new Map<string, Map<string, Counter>>();
  readonly prices = new Map<string, PriceSet>();
  /** The number of the last change of the prices (store/prices/interface.ts PriceChange). */
  priceSeq = 0;
  readonly listeners: Array<(e: StoreEvent) => void> = [];
  /** Webhook endpoints, the outbox's deliveries, and event ids already enqueued (until when). */
  readonly endpoints = new Map<string, Endpoint>();
  readonly deliveries = new Map<string, MemoryDelivery>();
  readonly seenEvents = new Map<string, number>();
  /** The billing exporters' cursors, by exporter and account (NUL between). */
  readonly billing = new Map<string, Cursor>();
  /** The portal's members, by account, then address. */
  readonly members = new Map<string, Map<string, Member>>();
  /** The portal's sign-ups waiting for an operator, by id. */
  readonly signups = new Map<string, SignUp>();
  /** People's passkeys, by credential id. */
  readonly passkeys = new Map<string, Passkey>();
  /** The Stripe mirror's inbox, subscriptions and indexes. */
  readonly stripe = new StripeMemoryState();
  /** Bumped by every change of an existing account: slots from before it are looked up again. */
  epoch = 0;
  countersDirty = false;
  /** Each account as the state file holds it, encoded once per change of that account. */
  private readonly accountJson = new Map<string, string>();
  /** The price sets as the state file holds them, encoded once per change of any. */
  private pricesJson: string | null = null;
  /** The file up to its counters (accounts and prices), encoded once per change of either. */
  private fixed: Buffer | null = null;
  private readonly writer: StateWriter | null = null;
  private readonly flushTimer: NodeJS.Timeout | undefined;

  /** `onWriteError`: a counter flush failed (it is tried again a second later). */
  constructor(
    readonly now: () => number,
    file: string | null,
    private readonly onWriteError: (err: unknown) => void,
  ) {
    if (file === null) return;
    const state = readState(file);
    if (state) this.restore(state);
    this.writer = new StateWriter(file, () => this.parts());
    this.flushTimer = setInterval(() => this.flushCounters(), COUNTER_FLUSH_MS).unref();
  }

  setAccount(account: StoredAccount): void {
    this.accounts.set(account.id, account);
    if (this.writer !== null) this.accountJson.set(account.id, JSON.stringify(account));
  }

  /**
   * The account and its key hashes' entries. Its counters and records stay until they expire (its
   * usage history outlives it); while any does, the account is kept as it was, for the exports.
   */
  removeAccount(account: StoredAccount): void {
    this.accounts.delete(account.id);
    this.accountJson.delete(account.id);
    for (const k of account.keys) this.byKeyHash.delete(k.key_hash);
    let untilMs = 0;
    for (const c of this.counters.get(account.id)?.values() ?? [])
      if (c.record !== null) untilMs = Math.max(untilMs, c.expireAtMs);
    const now = this.now();
    for (const [id, d] of this.deleted) if (d.untilMs <= now) this.deleted.delete(id);
    if (untilMs > now) this.deleted.set(account.id, { account, untilMs });
  }

  /** The live counter of an account's period, made (at zero) when it has none or it expired. */
  periodCounter(accountId: string, periodId: string, expireAtMs: number): Counter {
    let periods = this.counters.get(accountId);
    if (!periods) {
      periods = new Map();
      this.counters.set(accountId, periods);
    }
    let counter = periods.get(periodId);
    if (!counter || counter.expireAtMs <= this.now()) {
      counter = newCounter(accountId, periodId, 0, expireAtMs);
      periods.set(periodId, counter);
    }
    return counter;
  }

  /**
   * After a change of the account that needs no announcement (a key's `last_used_on`): on disk
   * with the next counter flush, at most a second later.
   */
  touchAccount(account: StoredAccount): void {
    if (this.writer === null) return;
    this.accountJson.set(account.id, JSON.stringify(account));
    this.fixed = null;
    this.countersDirty = true;
  }

  /** After a change of accounts: resolves once it is on disk (at once without a file). */
  save(): Promise<void> {
    this.fixed = null;
    return this.writer === null ? Promise.resolve() : this.writer.write();
  }

  savePrices(): Promise<void> {
    this.pricesJson = null;
    return this.save();
  }

  emit(event: StoreEvent): void {
    for (const l of this.listeners) l(event);
  }

  async close(): Promise<void> {
    this.listeners.length = 0;
    clearInterval(this.flushTimer);
    await this.writer?.close(this.countersDirty);
    this.countersDirty = false;
  }

  private flushCounters(): void {
    if (!this.countersDirty || this.writer === null) return;
    this.countersDirty = false;
    this.writer.write().catch((err: unknown) => {
      this.countersDirty = true;
      this.onWriteError(err);
    });
  }

  /**
   * The state file's text from the parts kept encoded: a flush of counters encodes only the
   * counters, a fraction of what encoding the whole file costs the event loop
   * (docs/performance.md).
   */
  private parts(): StateParts {
    const now = this.now();
    const counters: string[] = [];
    for (const periods of this.counters.values())
      for (const c of periods.values()) if (c.expireAtMs > now) counters.push(counterJson(c));
    if (this.fixed === null) {
      this.pricesJson ??= JSON.stringify([...this.prices.values()]);
      const accounts = [...this.accountJson.values()].join(',');
      const deleted = [...this.deleted.values()].filter((d) => d.untilMs > now);
      const kept = deleted.length === 0 ? '' : `"deleted":${JSON.stringify(deleted)},`;
      this.fixed = Buffer.from(
        `{"version":1,"accounts":[${accounts}],${kept}"price_seq":${this.priceSeq},"prices":${this.pricesJson},"counters":[`,
      );
    }
    return [
      this.fixed,
      `${counters.join(',')}]${this.webhooksJson(now)}${this.billingJson()}${this.membersJson()}${this.stripe.fileJson(now)}}`,
    ];
  }

  /** The outbox with the counters: it changes as often (an event per crossing, an attempt per delivery). */
  private webhooksJson(now: number): string {
    if (this.endpoints.size === 0 && this.deliveries.size === 0 && this.seenEvents.size === 0) return '';
    const seen: Array<[string, number]> = [];
    for (const [id, until] of this.seenEvents) if (until > now) seen.push([id, until]);
    const webhooks = { endpoints: [...this.endpoints.values()], deliveries: [...this.deliveries.values()], seen };
    return `,"webhooks":${JSON.stringify(webhooks)}`;
  }

  /** The billing cursors with the counters: an exporter moves them as the counters grow. */
  private billingJson(): string {
    if (this.billing.size === 0) return '';
    return `,"billing":${JSON.stringify([...this.billing])}`;
  }

  /** Members change seldom; they go with the counters rather than make the file's start change. */
  private membersJson(): string {
    const keys = this.passkeys.size === 0 ? '' : `,"passkeys":${JSON.stringify([...this.passkeys.values()])}`;
    const waiting = `${this.signups.size === 0 ? '' : `,"signups":${JSON.stringify([...this.signups.values()])}`}${keys}`;
    if (this.members.size === 0) return waiting;
    return `,"members":${JSON.stringify([...this.members.values()].flatMap((m) => [...m.values()]))}${waiting}`;
  }

  private restore(state: MemoryState): void {
    for (const a of state.accounts) {
      const account = withKeys(a);
      this.accounts.set(a.id, account);
      this.accountJson.set(a.id, JSON.stringify(account));
      for (const k of account.keys) this.byKeyHash.set(k.key_hash, a.id);
    }
    for (const d of state.deleted ?? [])
      this.deleted.set(d.account.id, { account: withKeys(d.account), untilMs: d.untilMs });
    for (const p of state.prices) this.prices.set(p.effective_date, p);
    this.priceSeq = state.price_seq ?? 0;
    for (const c of state.counters) {
      let periods = this.counters.get(c.account);
      if (!periods) {
        periods = new Map();
        this.counters.set(c.account, periods);
      }
      const counter = newCounter(c.account, c.period, c.used, c.expire_at_ms, c.alerted ?? []);
      for (const [day, n] of Object.entries(c.days ?? {})) counter.days.set(day, n);
      counter.record = c.record ?? null;
      periods.set(c.period, counter);
    }
    for (const [key, cursor] of state.billing ?? []) this.billing.set(key, cursor);
    for (const m of state.members ?? []) {
      const members = this.members.get(m.account_id) ?? new Map<string, Member>();
      members.set(m.email, m);
      this.members.set(m.account_id, members);
    }
    for (const s of state.signups ?? []) this.signups.set(s.id, s);
    for (const p of state.passkeys ?? []) this.passkeys.set(p.id, p);
    if (state.stripe) this.stripe.restore(state.stripe);
    const w = state.webhooks;
    if (w === undefined) return;
    for (const e of w.endpoints) this.endpoints.set(e.id, e);
    for (const d of w.deliveries) this.deliveries.set(d.id, d);
    for (const [id, until] of w.seen) this.seenEvents.set(id, until);
  }
}

/** An account from the file: one written before accounts had several keys holds one `key_hash`, its default key. */
function withKeys(a: MemoryState['accounts'][number]): StoredAccount {
  const { key_hash, keys, ...rest } = a;
  return { ...rest, keys: keysOf(keys && JSON.stringify(keys), key_hash, a.created_at) };
}
