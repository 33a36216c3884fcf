import type { Logger } from 'pino';
import { RedisAccounts } from '../accounts/redis.js';
import { RedisBilling } from '../billing/redis.js';
import { CompositeStore } from '../composite.js';
import { RedisCoordination } from '../coordination/redis.js';
import { RedisCounting } from '../counting/redis.js';
import { RedisEvents } from '../events/redis.js';
import { RedisKeys } from '../keys/redis.js';
import { RedisPrices } from '../prices/redis.js';
import { RedisBackend } from './backend.js';
import { quit, type RedisStoreOptions } from './connection.js';

export type { RedisStoreOptions };

/**
 * The shared store on Redis (standalone, Sentinel or Cluster): the Redis implementations of the
 * five concerns composite.ts bundles (accounts, counting, prices, coordination, events) and of
 * billing, over one connection (redis/backend.ts, which also lays out the keys).
 */
export class RedisStore extends CompositeStore {
  readonly kind = 'redis';
  readonly billing: RedisBilling;
  readonly keys: RedisKeys;
  private readonly backend: RedisBackend;
  private readonly counters: RedisCounting;
  private readonly coordinator: RedisCoordination;

  /** `billingTtlMs`: how long an exporter's cursor outlives its last pass (the ledger's retention). */
  constructor(options: RedisStoreOptions, log: Logger, billingTtlMs = 401 * 86_400_000) {
    const backend = new RedisBackend(options, log);
    const events = new RedisEvents(backend);
    const counting = new RedisCounting(backend, events);
    const coordination = new RedisCoordination(backend);
    super(new RedisAccounts(backend), counting, new RedisPrices(backend), coordination, events);
    this.backend = backend;
    this.counters = counting;
    this.coordinator = coordination;
    this.billing = new RedisBilling(backend, billingTtlMs);
    this.keys = new RedisKeys(backend);
    backend.start();
  }

  /** Consume script calls sent so far (each carries one or more requests). */
  consumeCalls(): number {
    return this.counters.consumeCalls();
  }

  ping(): Promise<void> {
    const { backend } = this;
    return backend.run(async () => {
      await backend.redis.ping();
    });
  }

  dataLost(): boolean {
    return this.backend.dataLost();
  }

  async close(): Promise<void> {
    this.backend.closed = true;
    const subscriber = this.coordinator.stop();
    this.counters.stop();
    await Promise.all([quit(this.backend.redis), subscriber && quit(subscriber)]);
  }
}
