/**
 * Applies the Stripe events the webhook endpoint wrote to the store, in every gateway process
 * (never on the request path): the endpoint kicks its own gateway at once, and every gateway
 * polls, so an event answered 200 by a gateway killed right after is applied by whoever comes
 * next. An account's events are applied one at a time across the deployment (a lease per
 * account), so the effect made last is that of the state held last.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { isGatewayError } from '../failures.js';
import { OutageLog } from '../log/outage.js';
import type { CoordinationStore, InboxItem, StripeStore } from '../store/store.js';
import { NOT_YET, type StripeApply } from './stripe-apply.js';
import { type Happening, happeningOf } from './stripe-events.js';

export type { AccountChange } from './stripe-apply.js';

const POLL_MS = 1000;
// A claim lasts far longer than applying an event takes; a gateway that dies lets it run out.
const CLAIM_MS = 5000;
const CLAIM_AT_ONCE = 16;
const ACCOUNT_LEASE_MS = 10_000;
// An account's lease held by another gateway: its event is tried again this soon.
const BUSY_RETRY_MS = 200;
// A subscription event whose customer no account has yet waits for its checkout this long.
const WAIT_FOR_CUSTOMER_MS = 3_600_000;
const TIMERS_EVERY_MS = 5000;

export class StripeMirror {
  private readonly holder = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private lastTimersMs = 0;
  private readonly outage: OutageLog<'failed_rounds'>;

  constructor(
    private readonly apply: StripeApply,
    private readonly o: {
      stripe: StripeStore;
      coordination: Pick<CoordinationStore, 'lease' | 'releaseLease'>;
      log: Logger;
      now: () => number;
    },
  ) {
    this.outage = new OutageLog(o.log, ['failed_rounds'], {
      began: 'stripe mirror: a round failed; events wait in the store',
      goesOn: 'stripe mirror: rounds still failing',
      ended: 'stripe mirror: rounds succeed again',
    });
  }

  start(): void {
    this.timer = setInterval(() => this.kick(), POLL_MS);
    this.timer.unref();
    this.kick();
  }

  /** Looks at the inbox at once (an event was just written to it). */
  kick(): void {
    if (this.stopped) return;
    if (this.running !== null) {
      this.again = true;
      return;
    }
    this.running = this.round()
      .then(
        () => this.outage.ended(),
        (err: unknown) => this.outage.failed((err as Error).message, 'failed_rounds'),
      )
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    this.outage.close();
  }

  private async round(): Promise<void> {
    const { stripe, now } = this.o;
    for (;;) {
      const items = await stripe.stripeClaim(now(), CLAIM_MS, CLAIM_AT_ONCE);
      for (const item of items) await this.one(item);
      if (items.length < CLAIM_AT_ONCE || this.stopped) break;
    }
    if (now() - this.lastTimersMs >= TIMERS_EVERY_MS) {
      this.lastTimersMs = now();
      for (const accountId of await stripe.stripeDueTimers(now()))
        await this.underLease(accountId, async () => {
          const r = await stripe.stripeSubscription(accountId);
          if (r === null) await stripe.stripeSetTimer(accountId, null);
          else await this.apply.reconcile(accountId, r, false);
        });
    }
  }

  /** One event: applied and settled, or left for a retry (its claim runs out, or it is deferred). */
  private async one(item: InboxItem): Promise<void> {
    const { stripe, log } = this.o;
    let read: ReturnType<typeof happeningOf>;
    try {
      read = happeningOf(item.body);
    } catch (err) {
      log.warn({ event_id: item.id, err: (err as Error).message }, 'stripe: an event could not be read; dropped');
      await this.apply.unmatched(item, null, null, `the event could not be read: ${(err as Error).message}`, null);
      return stripe.stripeSettle(item.id);
    }
    try {
      const retryAt = await this.applied(item, read.happening);
      if (retryAt !== null) return stripe.stripeDefer(item.id, retryAt);
    } catch (err) {
      // The store is down: the item stays, and is taken again when its claim runs out.
      if (!isGatewayError(err) || err.code === 'STORE_UNAVAILABLE') throw err;
      // Refused by the account change itself: it would be every time.
      await this.apply.unmatched(item, null, null, `the account change was refused: ${err.message}`, null);
    }
    await stripe.stripeSettle(item.id);
  }

  /** Applies it; when to try again (its customer not linked yet, its account busy), or null when done. */
  private async applied(item: InboxItem, h: Happening): Promise<number | null> {
    const { now } = this.o;
    if (h.kind === 'checkout') await this.apply.checkout(item, h);
    if (h.kind !== 'subscription') return null;
    const giveUp = now() - item.received_ms >= WAIT_FOR_CUSTOMER_MS;
    const account = await this.apply.accountFor(item, h, giveUp);
    if (account === NOT_YET) return now() + retryDelay(item.attempts);
    if (account === null) return null;
    const done = await this.underLease(account.id, () => this.apply.subscription(account.id, h.state));
    return done ? null : now() + BUSY_RETRY_MS;
  }

  /** Runs `work` holding the account's lease; false when another gateway holds it. */
  private async underLease(accountId: string, work: () => Promise<void>): Promise<boolean> {
    const name = `stripe:${accountId}`;
    if (!(await this.o.coordination.lease(name, this.holder, ACCOUNT_LEASE_MS))) return false;
    try {
      await work();
    } finally {
      await this.o.coordination.releaseLease(name, this.holder);
    }
    return true;
  }
}

/** 1 s doubling per attempt, at most a minute. */
const retryDelay = (attempts: number): number => Math.min(60_000, 1000 * 2 ** Math.max(0, attempts - 1));
