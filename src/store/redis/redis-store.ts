import type { Logger } from 'pino';
import { RedisAccounts } from '../accounts/redis.js';
import { RedisBilling } from '../billing/redis.js';
import { RedisCoordination } from '../coordination/redis.js';
import { RedisCounting } from '../counting/redis.js';
import { RedisEvents } from '../events/redis.js';
import { RedisKeys } from '../keys/redis.js';
import { RedisPortal } from '../portal/redis.js';
import { RedisPrices } from '../prices/redis.js';
import type { Store, StoreCapabilities } from '../store.js';
import { RedisStripe } from '../stripe/redis.js';
import { RedisBackend } from './backend.js';
import { quit, type RedisStoreOptions } from './connection.js';

export type { RedisStoreOptions };

// CONSUME counts a crossing; moving it to the outbox is a second step a dying process can miss.
const CAPABILITIES: StoreCapabilities = { sharedAcrossProcesses: true, crossingsCanBeStranded: true };

/**
 * The shared store on Redis (standalone, Sentinel or Cluster): the Redis implementations of the
 * six concerns over one connection (redis/backend.ts, which also lays out the keys).
 */
export class RedisStore implements Store {
  readonly kind = 'redis';
  readonly capabilities = CAPABILITIES;
  readonly accounts: RedisAccounts;
  readonly counting: RedisCounting;
  readonly prices: RedisPrices;
  readonly coordination: RedisCoordination;
  readonly events: RedisEvents;
  readonly billing: RedisBilling;
  readonly keys: RedisKeys;
  readonly portal: RedisPortal;
  readonly stripe: RedisStripe;
  private readonly backend: RedisBackend;

  /** `billingTtlMs`: how long an exporter's cursor outlives its last pass (the ledger's retention). */
  constructor(options: RedisStoreOptions, log: Logger, billingTtlMs = 401 * 86_400_000) {
    const backend = new RedisBackend(options, log);
    this.backend = backend;
    this.accounts = new RedisAccounts(backend);
    this.events = new RedisEvents(backend);
    this.counting = new RedisCounting(backend, this.events);
    this.prices = new RedisPrices(backend);
    this.coordination = new RedisCoordination(backend);
    this.billing = new RedisBilling(backend, billingTtlMs);
    this.keys = new RedisKeys(backend);
    this.portal = new RedisPortal(backend);
    this.stripe = new RedisStripe(backend);
    backend.start();
  }

  /** Consume script calls sent so far (each carries one or more requests). */
  consumeCalls(): number {
    return this.counting.consumeCalls();
  }

  /** Whether consumes carry a deadline yet: Redis' clock has been measured (counting/redis-clock.ts). */
  clockKnown(): boolean {
    return this.counting.clockKnown();
  }

  ping(): Promise<void> {
    const { backend } = this;
    return backend.run(async () => {
      await backend.redis.ping();
    });
  }

  msSinceDataLoss(): number | null {
    return this.backend.msSinceDataLoss();
  }

  async close(): Promise<void> {
    this.backend.closed = true;
    const subscriber = this.coordination.stop();
    this.counting.stop();
    await Promise.all([quit(this.backend.redis), subscriber && quit(subscriber)]);
  }
}
