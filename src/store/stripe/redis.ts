import type { Result } from 'ioredis';
import { GatewayError } from '../../failures.js';
import type { RedisBackend } from '../redis/backend.js';
import {
  type InboxItem,
  inboxItem,
  STRIPE_EVENT_KEEP_MS,
  type StripeStore,
  type SubscriptionRecord,
  type SubscriptionState,
  UNMATCHED_KEPT,
  type UnmatchedEntry,
  unmatchedEntry,
} from './interface.js';
import { CAS, CLAIM, RECEIVE } from './lua.js';
import { advanced, subscriptionRecord } from './subscription.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    fpgStripeReceive(
      seen: string,
      inbox: string,
      due: string,
      id: string,
      item: string,
      keepMs: number,
      dueMs: number,
    ): Result<number, Context>;
    fpgStripeClaim(inbox: string, due: string, nowMs: number, leaseMs: number, max: number): Result<string[], Context>;
    fpgStripeCas(key: string, expected: string, next: string): Result<number, Context>;
  }
}

// A record written by two gateways at once: the loser reads again.
const CAS_TRIES = 8;

/**
 * The Stripe mirror on Redis. Keys:
 *   fpg:{stripe}:seen:EVENT   an event id received (30 days)
 *   fpg:{stripe}:inbox        hash event id → item, until applied
 *   fpg:{stripe}:due          sorted set of the inbox's ids by when each is due
 *   fpg:{stripe}:customers    hash Stripe customer → account id
 *   fpg:{stripe}:timers       sorted set of account ids by when the mirror looks again
 *   fpg:{stripe}:unmatched    list of unmatched entries (JSON), newest first
 *   fpg:{acct:ID}:stripe      the account's subscription record (JSON), in the account's slot
 * The inbox's keys share one slot, so receiving and claiming are one script on a Cluster too.
 */
export class RedisStripe implements StripeStore {
  constructor(private readonly b: RedisBackend) {
    b.define({
      fpgStripeReceive: { lua: RECEIVE, numberOfKeys: 3 },
      fpgStripeClaim: { lua: CLAIM, numberOfKeys: 2 },
      fpgStripeCas: { lua: CAS, numberOfKeys: 1 },
    });
  }

  stripeReceive(item: InboxItem): Promise<boolean> {
    const { redis } = this.b;
    return this.b.run(
      async () =>
        (await redis.fpgStripeReceive(
          this.key(`seen:${item.id}`),
          this.key('inbox'),
          this.key('due'),
          item.id,
          JSON.stringify(item),
          STRIPE_EVENT_KEEP_MS,
          item.due_ms,
        )) === 1,
    );
  }

  stripeClaim(nowMs: number, leaseMs: number, max: number): Promise<InboxItem[]> {
    return this.b.run(async () => {
      const raw = await this.b.redis.fpgStripeClaim(this.key('inbox'), this.key('due'), nowMs, leaseMs, max);
      return raw.map((r) => inboxItem.parse(JSON.parse(r)));
    });
  }

  stripeSettle(id: string): Promise<void> {
    return this.b.run(async () => {
      await this.b.redis.multi().hdel(this.key('inbox'), id).zrem(this.key('due'), id).exec();
    });
  }

  stripeDefer(id: string, dueMs: number): Promise<void> {
    return this.b.run(async () => {
      await this.b.redis.zadd(this.key('due'), 'XX', dueMs, id);
    });
  }

  stripeInboxDepth(): Promise<number> {
    return this.b.run(() => this.b.redis.hlen(this.key('inbox')));
  }

  stripeSubscription(accountId: string): Promise<SubscriptionRecord | null> {
    return this.b.run(async () => decode(await this.b.redis.get(this.subKey(accountId))));
  }

  stripeAdvance(accountId: string, state: SubscriptionState, nowMs: number) {
    return this.b.run(async () => {
      const key = this.subKey(accountId);
      for (let i = 0; i < CAS_TRIES; i++) {
        const raw = await this.b.redis.get(key);
        const next = advanced(decode(raw), state, nowMs);
        if (next === null || next.applied === 'again') return next;
        if ((await this.b.redis.fpgStripeCas(key, raw ?? '', JSON.stringify(next.record))) === 1) return next;
      }
      throw contended(key);
    });
  }

  stripeMarkSuspended(accountId: string, eventId: string, suspended: boolean): Promise<void> {
    return this.b.run(async () => {
      const key = this.subKey(accountId);
      for (let i = 0; i < CAS_TRIES; i++) {
        const raw = await this.b.redis.get(key);
        const r = decode(raw);
        if (r === null || r.event_id !== eventId || r.suspended === suspended) return;
        if ((await this.b.redis.fpgStripeCas(key, raw ?? '', JSON.stringify({ ...r, suspended }))) === 1) return;
      }
      throw contended(key);
    });
  }

  stripeCustomerAccount(customer: string): Promise<string | null> {
    return this.b.run(() => this.b.redis.hget(this.key('customers'), customer));
  }

  stripeLinkCustomer(customer: string, accountId: string): Promise<void> {
    return this.b.run(async () => {
      await this.b.redis.hset(this.key('customers'), customer, accountId);
    });
  }

  stripeSetTimer(accountId: string, dueMs: number | null): Promise<void> {
    return this.b.run(async () => {
      if (dueMs === null) await this.b.redis.zrem(this.key('timers'), accountId);
      else await this.b.redis.zadd(this.key('timers'), dueMs, accountId);
    });
  }

  stripeDueTimers(nowMs: number): Promise<string[]> {
    return this.b.run(() => this.b.redis.zrangebyscore(this.key('timers'), '-inf', nowMs));
  }

  stripeAddUnmatched(entry: UnmatchedEntry): Promise<void> {
    const key = this.key('unmatched');
    return this.b.run(async () => {
      await this.b.redis
        .multi()
        .lpush(key, JSON.stringify(entry))
        .ltrim(key, 0, UNMATCHED_KEPT - 1)
        .exec();
    });
  }

  stripeUnmatched(): Promise<UnmatchedEntry[]> {
    return this.b.run(async () =>
      (await this.b.redis.lrange(this.key('unmatched'), 0, -1)).map((r) => unmatchedEntry.parse(JSON.parse(r))),
    );
  }

  private key(name: string): string {
    return `${this.b.options.key_prefix}{stripe}:${name}`;
  }

  private subKey(accountId: string): string {
    return `${this.b.options.key_prefix}{acct:${accountId}}:stripe`;
  }
}

const decode = (raw: string | null): SubscriptionRecord | null =>
  raw === null ? null : subscriptionRecord.parse(JSON.parse(raw));

const contended = (key: string): GatewayError =>
  new GatewayError('STORE_UNAVAILABLE', `${key}: changed by another writer ${CAS_TRIES} times in a row`);
