import type { Result } from 'ioredis';
import type { RedisBackend } from '../redis/backend.js';
import type { ConsumeReceiver, ConsumeResult, ConsumeSpec, CountingStore } from './interface.js';
import { CONSUME, REFUND } from './lua.js';
import { ConsumeBatcher } from './redis-batch.js';
import { RedisClock } from './redis-clock.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    fpgConsume(numKeys: number, ...keysAndArgs: Array<string | number>): Result<number[], Context>;
    fpgRefund(counter: string): Result<number, Context>;
  }
}

// CONSUME takes a variable number of keys (a batch), so its key count comes with each call.
const SCRIPTS = {
  fpgConsume: { lua: CONSUME },
  fpgRefund: { lua: REFUND, numberOfKeys: 1 },
};

const CLOCK_EVERY_MS = 60_000;

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

  constructor(private readonly b: RedisBackend) {
    b.define(SCRIPTS);
    const cluster = b.options.cluster !== undefined;
    this.clock = new RedisClock(b.options.command_timeout_ms);
    this.batcher = new ConsumeBatcher(
      (spec) => [b.accountKey(spec.accountId), b.counterKey(spec.accountId, spec.periodId)],
      (numKeys, keysAndArgs) => b.run(() => b.redis.fpgConsume(numKeys, ...keysAndArgs)),
      cluster,
      (err) => b.log.error({ err }, 'a metered request failed after its consume'),
      // Cluster nodes' clocks are not this connection's: no deadline there.
      cluster ? undefined : () => this.clock.deadline(),
    );
    if (!cluster) this.keepClock();
  }

  consume(spec: ConsumeSpec): Promise<ConsumeResult> {
    return new Promise((resolve, reject) => this.batcher.add(spec, { consumed: resolve, failed: reject }));
  }

  consumeInto(spec: ConsumeSpec, receiver: ConsumeReceiver): void {
    this.batcher.add(spec, receiver);
  }

  /** Consume script calls sent so far (each carries one or more requests). */
  consumeCalls(): number {
    return this.batcher.calls;
  }

  refund(accountId: string, periodId: string): Promise<void> {
    const { b } = this;
    return b.run(async () => {
      await b.redis.fpgRefund(b.counterKey(accountId, periodId));
    });
  }

  usage(accountId: string, periodId: string): Promise<number> {
    const { b } = this;
    return b.run(async () => Number((await b.redis.get(b.counterKey(accountId, periodId))) ?? 0));
  }

  /** Stops measuring the clock (the store closes). */
  stop(): void {
    clearInterval(this.clockTimer);
  }

  /** Measures Redis' clock on every connection (a failover may bring another clock) and every minute. */
  private keepClock(): void {
    const measure = (): void => void this.clock.measure(() => this.b.redis.time()).catch(() => undefined);
    this.b.redis.on('ready', measure);
    this.clockTimer = setInterval(measure, CLOCK_EVERY_MS).unref();
  }
}
