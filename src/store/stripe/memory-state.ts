/** The Stripe mirror's part of the memory store's data, and its form in the state file. */
import { z } from 'zod';
import { type InboxItem, inboxItem, type UnmatchedEntry, unmatchedEntry } from './interface.js';
import { type SubscriptionRecord, subscriptionRecord } from './subscription.js';

export const stripeStateSchema = z.strictObject({
  seen: z.array(z.tuple([z.string(), z.number()])),
  inbox: z.array(inboxItem),
  subscriptions: z.array(z.tuple([z.string(), subscriptionRecord])),
  customers: z.array(z.tuple([z.string(), z.string()])),
  timers: z.array(z.tuple([z.string(), z.number()])),
  unmatched: z.array(unmatchedEntry),
});

export class StripeMemoryState {
  /** Event ids received, until when they are remembered. */
  readonly seen = new Map<string, number>();
  readonly inbox = new Map<string, InboxItem>();
  readonly subscriptions = new Map<string, SubscriptionRecord>();
  readonly customers = new Map<string, string>();
  readonly timers = new Map<string, number>();
  /** Newest first. */
  unmatched: UnmatchedEntry[] = [];

  get empty(): boolean {
    return (
      this.seen.size + this.inbox.size + this.subscriptions.size + this.customers.size + this.timers.size === 0 &&
      this.unmatched.length === 0
    );
  }

  /** Its part of the state file, with the counters (the inbox must be on disk before a webhook is answered); none when empty. */
  fileJson(now: number): string {
    return this.empty ? '' : `,"stripe":${JSON.stringify(this.snapshot(now))}`;
  }

  snapshot(now: number): z.infer<typeof stripeStateSchema> {
    return {
      seen: [...this.seen].filter(([, until]) => until > now),
      inbox: [...this.inbox.values()],
      subscriptions: [...this.subscriptions],
      customers: [...this.customers],
      timers: [...this.timers],
      unmatched: this.unmatched,
    };
  }

  restore(s: z.infer<typeof stripeStateSchema>): void {
    for (const [id, until] of s.seen) this.seen.set(id, until);
    for (const i of s.inbox) this.inbox.set(i.id, i);
    for (const [a, r] of s.subscriptions) this.subscriptions.set(a, r);
    for (const [c, a] of s.customers) this.customers.set(c, a);
    for (const [a, ms] of s.timers) this.timers.set(a, ms);
    this.unmatched = s.unmatched;
  }
}
