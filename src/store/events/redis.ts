import type { Result } from 'ioredis';
import type { EventType, OutboxEvent } from '../../events/event.js';
import type { RedisBackend } from '../redis/backend.js';
import { pairsToRecord } from '../redis/codec.js';
import {
  ATTEMPTS_KEPT,
  type AttemptOutcome,
  type AttemptRecord,
  type Claimed,
  DELIVERIES_KEPT,
  DELIVERY_KEEP_MS,
  type Delivery,
  type DeliveryState,
  ENDPOINT_CONCURRENCY,
  type Endpoint,
  EVENT_ID_KEEP_MS,
  type EventStore,
} from './interface.js';
import { ADD_ACCOUNT_ENDPOINT, CLAIM, DELETE_ENDPOINT, ENQUEUE, RECORD, REPLAY } from './lua.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    fpgEnqueue(...keysAndArgs: string[]): Result<number, Context>;
    fpgClaim(...keysAndArgs: string[]): Result<Array<string[] | string>, Context>;
    fpgRecord(...keysAndArgs: string[]): Result<number, Context>;
    fpgDeleteEndpoint(...keysAndArgs: string[]): Result<number, Context>;
    fpgReplay(...keysAndArgs: string[]): Result<number, Context>;
    fpgAddAccountEndpoint(...keysAndArgs: string[]): Result<number, Context>;
  }
}

const SCRIPTS = {
  fpgEnqueue: { lua: ENQUEUE, numberOfKeys: 4 },
  fpgClaim: { lua: CLAIM, numberOfKeys: 3 },
  fpgRecord: { lua: RECORD, numberOfKeys: 3 },
  fpgDeleteEndpoint: { lua: DELETE_ENDPOINT, numberOfKeys: 3 },
  fpgReplay: { lua: REPLAY, numberOfKeys: 3 },
  fpgAddAccountEndpoint: { lua: ADD_ACCOUNT_ENDPOINT, numberOfKeys: 1 },
};

const orNull = (v: string | undefined): string | null => (v === undefined || v === '' ? null : v);
const numOrNull = (v: string | undefined): number | null => (v === undefined || v === '' ? null : Number(v));

/** An endpoint's JSON; one stored before `created_via` was kept is the operator's. */
const decodeEndpoint = (json: string): Endpoint => ({
  created_via: 'operator',
  ...(JSON.parse(json) as Omit<Endpoint, 'created_via'> & Partial<Pick<Endpoint, 'created_via'>>),
});

function decodeDelivery(id: string, h: Record<string, string>): Delivery {
  return {
    id,
    event_id: h.event_id ?? '',
    endpoint_id: h.endpoint_id ?? '',
    type: (h.type ?? 'webhook.test') as EventType,
    body: h.body ?? '',
    attempts: Number(h.attempts ?? 0),
    state: (h.state ?? 'pending') as DeliveryState,
    last_status: numOrNull(h.last_status),
    last_error: orNull(h.last_error),
    next_attempt_ms: h.state === 'pending' ? numOrNull(h.next_attempt_ms) : null,
    created_ms: Number(h.created_ms ?? 0),
    // Absent on deliveries written before the log was kept.
    log: h.log === undefined ? [] : (JSON.parse(h.log) as AttemptRecord[]),
  };
}

/**
 * The outbox on Redis, every key under the hash tag `{wh}` (one Cluster slot):
 *   fpg:{wh}:endpoints     hash endpoint id → JSON (with its secrets)
 *   fpg:{wh}:due           sorted set delivery id → next attempt (or end of its claim), ms
 *   fpg:{wh}:pending       sorted set delivery id → created, ms (depth and oldest age)
 *   fpg:{wh}:d:ID          hash of one delivery (ID = event id.endpoint id), its attempts' log in `log`
 *   fpg:{wh}:ep:ID         sorted set of an endpoint's latest deliveries, for listing
 *   fpg:{wh}:seen:EVENT    an event id enqueued within EVENT_ID_KEEP_MS
 *   fpg:{wh}:busy:ID       sorted set of an endpoint's deliveries under claim → end of the claim
 *   fpg:{wh}:park:ID       sorted set of an endpoint's due deliveries waiting for a free claim
 *   fpg:{wh}:parked        set of endpoint ids with deliveries waiting (lua.ts CLAIM)
 * Durable as Redis is (append-only file): an event is in the outbox once its script returned.
 */
export class RedisEvents implements EventStore {
  private readonly tag: string;
  private readonly keys: [string, string, string];

  constructor(private readonly b: RedisBackend) {
    b.define(SCRIPTS);
    this.tag = `${b.options.key_prefix}{wh}:`;
    this.keys = [`${this.tag}endpoints`, `${this.tag}due`, `${this.tag}pending`];
  }

  putEndpoint(endpoint: Endpoint): Promise<void> {
    return this.b.run(async () => {
      await this.b.redis.hset(this.keys[0], endpoint.id, JSON.stringify(endpoint));
    });
  }

  addAccountEndpoint(endpoint: Endpoint & { account_id: string }, max: number): Promise<boolean> {
    return this.b.run(
      async () =>
        (await this.b.redis.fpgAddAccountEndpoint(
          this.keys[0],
          endpoint.account_id,
          endpoint.id,
          JSON.stringify(endpoint),
          String(max),
        )) === 1,
    );
  }

  getEndpoint(id: string): Promise<Endpoint | null> {
    return this.b.run(async () => {
      const json = await this.b.redis.hget(this.keys[0], id);
      return json === null ? null : decodeEndpoint(json);
    });
  }

  listEndpoints(accountId?: string): Promise<Endpoint[]> {
    return this.b.run(async () => {
      const all = Object.values(await this.b.redis.hgetall(this.keys[0])).map(decodeEndpoint);
      return accountId === undefined ? all : all.filter((e) => e.account_id === accountId);
    });
  }

  deleteEndpoint(id: string): Promise<boolean> {
    return this.b.run(async () => (await this.b.redis.fpgDeleteEndpoint(...this.keys, this.tag, id)) === 1);
  }

  enqueueEvent(event: OutboxEvent, onlyEndpoint?: string): Promise<boolean> {
    const seen = `${this.tag}seen:${event.id}`;
    const args = [event.id, event.type, event.account_id ?? '', event.body, String(event.created_ms)];
    return this.b.run(
      async () =>
        (await this.b.redis.fpgEnqueue(
          ...this.keys,
          seen,
          this.tag,
          ...args,
          String(EVENT_ID_KEEP_MS),
          onlyEndpoint ?? '',
          String(DELIVERIES_KEPT),
        )) >= 0,
    );
  }

  claimDeliveries(holder: string, nowMs: number, leaseMs: number, max: number): Promise<Claimed[]> {
    return this.b.run(async () => {
      const flat = await this.b.redis.fpgClaim(
        ...this.keys,
        this.tag,
        String(nowMs),
        String(leaseMs),
        String(max),
        holder,
        String(ENDPOINT_CONCURRENCY),
      );
      const out: Claimed[] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const h = pairsToRecord(flat[i] as string[]);
        const endpoint = decodeEndpoint(flat[i + 1] as string);
        out.push({ delivery: decodeDelivery(`${h.event_id}.${h.endpoint_id}`, h), endpoint });
      }
      return out;
    });
  }

  recordAttempt(deliveryId: string, holder: string, o: AttemptOutcome): Promise<boolean> {
    const state: DeliveryState = o.delivered ? 'delivered' : o.nextAttemptMs === null ? 'failed' : 'pending';
    const attempt: AttemptRecord = {
      at_ms: o.nowMs - o.ms,
      status: o.status,
      ms: o.ms,
      answer: o.answer,
      error: o.error,
    };
    return this.b.run(
      async () =>
        (await this.b.redis.fpgRecord(
          ...this.keys,
          this.tag,
          deliveryId,
          holder,
          state,
          o.status === null ? '' : String(o.status),
          o.error ?? '',
          state === 'pending' ? String(o.nextAttemptMs) : '',
          String(DELIVERY_KEEP_MS),
          JSON.stringify(attempt),
          String(ATTEMPTS_KEPT),
        )) === 1,
    );
  }

  replayDelivery(deliveryId: string, nowMs: number): Promise<boolean> {
    return this.b.run(
      async () => (await this.b.redis.fpgReplay(...this.keys, this.tag, deliveryId, String(nowMs))) === 1,
    );
  }

  listDeliveries(endpointId: string, limit: number): Promise<Delivery[]> {
    return this.b.run(async () => {
      const ids = await this.b.redis.zrevrange(`${this.tag}ep:${endpointId}`, 0, Math.min(limit, DELIVERIES_KEPT) - 1);
      if (ids.length === 0) return [];
      const pipe = this.b.redis.pipeline();
      for (const id of ids) pipe.hgetall(`${this.tag}d:${id}`);
      const replies = (await pipe.exec()) ?? [];
      const out: Delivery[] = [];
      ids.forEach((id, i) => {
        const h = replies[i]?.[1] as Record<string, string> | undefined;
        if (h && h.event_id !== undefined) out.push(decodeDelivery(id, h));
      });
      return out;
    });
  }

  outboxStats(): Promise<{ depth: number; oldestMs: number | null }> {
    return this.b.run(async () => {
      const [depth, oldest] = await Promise.all([
        this.b.redis.zcard(this.keys[2]),
        this.b.redis.zrange(this.keys[2], '0', '0', 'WITHSCORES'),
      ]);
      return { depth, oldestMs: oldest[1] === undefined ? null : Number(oldest[1]) };
    });
  }
}
