import type { Cluster, Redis, Result } from 'ioredis';
import { type ThresholdContext, thresholdEvent } from '../../events/event.js';
import type { EventStore } from '../events/interface.js';
import { type RedisBackend, storeUnavailable } from '../redis/backend.js';
import { consumeTarget } from '../redis/consume-target.js';
import { LeanConsume } from '../redis/lean-consume.js';
import { dropReached } from './alerts.js';
import type { ConsumeReceiver, ConsumeResult, ConsumeSpec, CountingStore, PeriodRecord } from './interface.js';
import { REFUND } from './ledger-lua.js';
import { CONSUME, CONSUME_KEYS } from './lua.js';
import { decodePeriods } from './period-records.js';
import { PERIODS, RECORD_CHANGE } from './periods-lua.js';
import { ConsumeBatcher, type ConsumeReply } from './redis-batch.js';
import { RedisClock } from './redis-clock.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    fpgConsumeOne(...keysAndArgs: Array<string | number>): Result<ConsumeReply, Context>;
    fpgRefund(counter: string, days: string, day: string): Result<number, Context>;
    fpgPeriods(index: string, fromMs: number, toMs: number): Result<Array<string | number>, Context>;
    fpgRecordChange(
      days: string,
      counter: string,
      atMs: number,
      plan: string,
      limit: number,
      endMs: number,
    ): Result<number, Context>;
  }
}

// Through ioredis, CONSUME runs on a Cluster only (elsewhere the store's consume connection sends
// it, lean-consume.ts), where a call carries one request: declared with its one key, that key is
// what ioredis' autopipelining groups calls by (its slot's nodes). Undeclared, the first argument
// is the count, calls of every slot shared one pipeline and the Cluster refused it (ioredis #2109).
const SCRIPTS = {
  fpgConsumeOne: { lua: CONSUME, numberOfKeys: CONSUME_KEYS },
  fpgRefund: { lua: REFUND, numberOfKeys: 2 },
  fpgPeriods: { lua: PERIODS, numberOfKeys: 1 },
  fpgRecordChange: { lua: RECORD_CHANGE, numberOfKeys: 2 },
};

const CLOCK_EVERY_MS = 60_000;
// Until a measurement is fast enough to trust (a busy host at start), it is tried again this often.
const CLOCK_UNKNOWN_EVERY_MS = 1_000;

/**
 * The counters on Redis. Consumes of one event-loop turn share one script call (redis-batch.ts);
 * on a Cluster each request keeps its own call. On a standalone Redis each call carries a
 * deadline in Redis' clock (redis-clock.ts), so a call Redis runs after its caller gave up counts
 * nothing.
 */
export class RedisCounting implements CountingStore {
  private readonly batcher: ConsumeBatcher;
  private readonly clock: RedisClock;
  private clockTimer: NodeJS.Timeout | undefined;
  private clockRetry: NodeJS.Timeout | undefined;
  private stopped = false;
  /** The consume connection (not on a Cluster). */
  private readonly lean: LeanConsume | undefined;

  constructor(
    private readonly b: RedisBackend,
    private readonly events: EventStore,
  ) {
    b.define(SCRIPTS);
    const cluster = b.options.cluster !== undefined;
    this.clock = new RedisClock(b.options.command_timeout_ms);
    // A Cluster keeps ioredis: one call per request, each on its slot's node (ioredis routes it by
    // its key), where a connection of our own would have to follow the slots. Standalone and
    // Sentinel (plain or TLS) consume on a connection of their own (lean-consume.ts).
    this.lean = 'nodes' in b.redis ? undefined : this.leanConnection(b, b.redis);
    const lean = this.lean;
    this.batcher = new ConsumeBatcher({
      keysOf: (spec) => ({
        account: b.accountKey(spec.accountId),
        counter: b.counterKey(spec.accountId, spec.periodId),
        days: b.daysKey(spec.accountId, spec.periodId),
      }),
      // Used on a Cluster only: elsewhere `lean`.
      script: (_, keysAndArgs) => b.run(() => b.redis.fpgConsumeOne(...keysAndArgs)),
      ...(lean === undefined
        ? {}
        : { lean: { connection: lean, gate: () => b.currentGate(), failure: storeUnavailable } }),
      perRequest: cluster,
      onReceiverError: (err) => b.log.error({ err }, 'a metered request failed after its consume'),
      // Cluster nodes' clocks are not this connection's: no deadline there.
      ...(cluster ? {} : { deadline: () => this.clock.deadline() }),
      onReached: (spec, used) => this.reachedThreshold(spec, used),
      onLate: (spec, day) => this.giveBackLate(spec, day),
    });
    if (!cluster) this.keepClock();
  }

  consume(spec: ConsumeSpec, day: string): Promise<ConsumeResult> {
    return new Promise((resolve, reject) => this.batcher.add(spec, day, { consumed: resolve, failed: reject }));
  }

  consumeInto(spec: ConsumeSpec, day: string, receiver: ConsumeReceiver): void {
    this.batcher.add(spec, day, receiver);
  }

  /** Consume script calls sent so far (each carries one or more requests). */
  consumeCalls(): number {
    return this.batcher.calls;
  }

  clockKnown(): boolean {
    return this.clock.known;
  }

  refund(accountId: string, periodId: string, day: string): Promise<void> {
    const { b } = this;
    return b.run(async () => {
      await b.redis.fpgRefund(b.counterKey(accountId, periodId), b.daysKey(accountId, periodId), day);
    });
  }

  /** One script call per account, all sent at once (pipelined; on a Cluster each to its node). */
  periodRecords(accountIds: string[], fromMs: number, toMs: number): Promise<PeriodRecord[][]> {
    const { b } = this;
    return b.run(() =>
      Promise.all(
        accountIds.map(async (id) => decodePeriods(await b.redis.fpgPeriods(b.periodsKey(id), fromMs, toMs))),
      ),
    );
  }

  recordPlanChange(
    accountId: string,
    periodId: string,
    atMs: number,
    now: { plan: string; limit: number; endMs: number },
  ): Promise<void> {
    const { b } = this;
    return b.run(async () => {
      await b.redis.fpgRecordChange(
        b.daysKey(accountId, periodId),
        b.counterKey(accountId, periodId),
        atMs,
        now.plan,
        now.limit,
        now.endMs,
      );
    });
  }

  usage(accountId: string, periodId: string): Promise<number> {
    const { b } = this;
    return b.run(async () => Number((await b.redis.get(b.counterKey(accountId, periodId))) ?? 0));
  }

  async recoverCrossings(
    resolve: (accountId: string, periodId: string) => Promise<ThresholdContext | null>,
  ): Promise<number> {
    const { b } = this;
    const pattern = `${b.options.key_prefix}{acct:*}:used:*:outbox`;
    const nodes: Array<Redis | Cluster> = 'nodes' in b.redis ? b.redis.nodes('master') : [b.redis];
    let found = 0;
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await b.run(() => node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000));
        cursor = next;
        for (const key of keys) {
          const m = /\{acct:(.+)\}:used:([^:]+):outbox$/.exec(key);
          if (!m) continue;
          const context = await resolve(m[1] as string, m[2] as string);
          if (context !== null) found += await this.moveCrossings(m[1] as string, m[2] as string, context);
        }
      } while (cursor !== '0');
    }
    return found;
  }

  /**
   * A request answered 503 whose call Redis ran after all (its reply came after the timeout): given
   * back, so that the counter holds only what was served. A give-back that fails is logged: the
   * one count it leaves is the networked counter's window (docs/stores.md).
   */
  private giveBackLate(spec: ConsumeSpec, day: string): void {
    const { accountId, periodId } = spec;
    this.refund(accountId, periodId, day).then(
      () => this.b.log.debug({ account_id: accountId }, 'a request answered 503 that Redis counted late: given back'),
      (err: unknown) =>
        this.b.log.warn(
          { err, account_id: accountId },
          'a request answered 503 that Redis counted late: not given back',
        ),
    );
  }

  /**
   * A reply reached a threshold: the script raised it (or another gateway had). Later requests
   * no longer carry it, and the period's crossings go to the webhook outbox, off the request path.
   */
  private reachedThreshold(spec: ConsumeSpec, used: number): void {
    const alerts = spec.alerts;
    if (alerts === undefined) return;
    dropReached(alerts, used);
    this.moveCrossings(spec.accountId, spec.periodId, alerts.context).catch((err: unknown) =>
      this.b.log.warn(
        { err, account_id: spec.accountId },
        'moving a usage threshold event to the outbox failed; it is retried by the next sweep',
      ),
    );
  }

  /**
   * Moves the period's recorded crossings into the webhook outbox: each is enqueued under its
   * deterministic id (so a second mover adds nothing), then removed from the period's list.
   */
  private async moveCrossings(accountId: string, periodId: string, context: ThresholdContext): Promise<number> {
    const { b } = this;
    const key = `${b.counterKey(accountId, periodId)}:outbox`;
    const entries = await b.run(() => b.redis.lrange(key, 0, -1));
    for (const entry of entries) {
      const [percent, used, limit] = entry.split(':').map(Number) as [number, number, number];
      const event = thresholdEvent({ accountId, periodId, percent, used, limit }, context, Date.now());
      await this.events.enqueueEvent(event);
      await b.run(() => b.redis.lrem(key, 1, entry));
    }
    return entries.length;
  }

  /**
   * The consume connection beside the command connection: the start waits for it, and on each
   * reconnect of the command connection it follows it (Sentinel: the primary may have moved).
   */
  private leanConnection(b: RedisBackend, commands: Redis): LeanConsume {
    const lean = new LeanConsume({
      ...consumeTarget(b.options, commands),
      script: CONSUME,
      commandTimeoutMs: b.options.command_timeout_ms,
      connectTimeoutMs: b.options.connect_timeout_ms,
      failure: storeUnavailable,
      commandsReady: () => commands.status === 'ready',
      log: b.log,
    });
    b.startsWith(() => lean.ready());
    commands.on('ready', () => lean.follow());
    return lean;
  }

  /** Stops measuring the clock and closes the consume connection (the store closes). */
  stop(): void {
    this.stopped = true;
    this.lean?.close();
    clearInterval(this.clockTimer);
    clearTimeout(this.clockRetry);
  }

  /** Measures Redis' clock on every connection (a failover may bring another clock) and every minute. */
  private keepClock(): void {
    const measure = (): void =>
      void this.clock
        .measure(() => this.b.redis.time())
        .catch(() => undefined)
        .then(() => {
          if (!this.clock.precise && !this.stopped && this.clockRetry === undefined)
            this.clockRetry = setTimeout(() => {
              this.clockRetry = undefined;
              measure();
            }, CLOCK_UNKNOWN_EVERY_MS).unref();
        });
    this.b.redis.on('ready', measure);
    this.clockTimer = setInterval(measure, CLOCK_EVERY_MS).unref();
  }
}
