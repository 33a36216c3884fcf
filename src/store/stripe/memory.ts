import type { MemoryData } from '../memory/state.js';
import {
  type InboxItem,
  STRIPE_EVENT_KEEP_MS,
  type StripeStore,
  type SubscriptionRecord,
  type SubscriptionState,
  UNMATCHED_KEPT,
  type UnmatchedEntry,
} from './interface.js';
import { advanced } from './subscription.js';

/**
 * The Stripe mirror in the embedded store: each call is one synchronous step, so atomic; a
 * change resolves once it is in the state file, so an event answered 200 survives a crash.
 */
export class MemoryStripe implements StripeStore {
  constructor(private readonly data: MemoryData) {}

  private get s() {
    return this.data.stripe;
  }

  async stripeReceive(item: InboxItem): Promise<boolean> {
    const now = this.data.now();
    const until = this.s.seen.get(item.id);
    if (until !== undefined && until > now) return false;
    this.s.seen.set(item.id, now + STRIPE_EVENT_KEEP_MS);
    this.s.inbox.set(item.id, { ...item });
    await this.data.save();
    return true;
  }

  async stripeClaim(nowMs: number, leaseMs: number, max: number): Promise<InboxItem[]> {
    const due = [...this.s.inbox.values()]
      .filter((i) => i.due_ms <= nowMs)
      .sort((a, b) => a.received_ms - b.received_ms)
      .slice(0, max);
    for (const i of due) {
      i.due_ms = nowMs + leaseMs;
      i.attempts += 1;
    }
    if (due.length > 0) await this.data.save();
    return due.map((i) => ({ ...i }));
  }

  async stripeSettle(id: string): Promise<void> {
    if (this.s.inbox.delete(id)) await this.data.save();
  }

  async stripeDefer(id: string, dueMs: number): Promise<void> {
    const item = this.s.inbox.get(id);
    if (item === undefined) return;
    item.due_ms = dueMs;
    await this.data.save();
  }

  async stripeInboxDepth(): Promise<number> {
    return this.s.inbox.size;
  }

  async stripeSubscription(accountId: string): Promise<SubscriptionRecord | null> {
    const r = this.s.subscriptions.get(accountId);
    return r === undefined ? null : { ...r };
  }

  async stripeAdvance(accountId: string, state: SubscriptionState, nowMs: number) {
    const next = advanced(this.s.subscriptions.get(accountId) ?? null, state, nowMs);
    if (next?.applied === 'new') {
      this.s.subscriptions.set(accountId, next.record);
      await this.data.save();
    }
    return next === null ? null : { record: { ...next.record }, applied: next.applied };
  }

  async stripeMarkSuspended(accountId: string, eventId: string, suspended: boolean): Promise<void> {
    const r = this.s.subscriptions.get(accountId);
    if (r === undefined || r.event_id !== eventId || r.suspended === suspended) return;
    this.s.subscriptions.set(accountId, { ...r, suspended });
    await this.data.save();
  }

  async stripeCustomerAccount(customer: string): Promise<string | null> {
    return this.s.customers.get(customer) ?? null;
  }

  async stripeLinkCustomer(customer: string, accountId: string): Promise<void> {
    this.s.customers.set(customer, accountId);
    await this.data.save();
  }

  async stripeSetTimer(accountId: string, dueMs: number | null): Promise<void> {
    if (dueMs === null) this.s.timers.delete(accountId);
    else this.s.timers.set(accountId, dueMs);
    await this.data.save();
  }

  async stripeDueTimers(nowMs: number): Promise<string[]> {
    return [...this.s.timers].filter(([, ms]) => ms <= nowMs).map(([a]) => a);
  }

  async stripeAddUnmatched(entry: UnmatchedEntry): Promise<void> {
    this.s.unmatched = [entry, ...this.s.unmatched].slice(0, UNMATCHED_KEPT);
    await this.data.save();
  }

  async stripeUnmatched(): Promise<UnmatchedEntry[]> {
    return [...this.s.unmatched];
  }
}
