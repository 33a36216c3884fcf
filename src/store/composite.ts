import type { OutboxEvent, ThresholdContext } from '../events/event.js';
import type { PriceSet } from '../prices/price-set-schema.js';
import type { AccountFilter, AccountPage, AccountPatch, AccountStore, StoredAccount } from './accounts/interface.js';
import type { BillingStore } from './billing/interface.js';
import type { CoordinationStore, StoreEvent, ThrottleRule } from './coordination/interface.js';
import type { ConsumeReceiver, ConsumeResult, ConsumeSpec, CountingStore, PeriodRecord } from './counting/interface.js';
import type { AttemptOutcome, Claimed, Delivery, Endpoint, EventStore } from './events/interface.js';
import type { KeyStore } from './keys/interface.js';
import type { PriceChange, PriceStore } from './prices/interface.js';
import type { Store } from './store.js';

/**
 * One backend's five concerns (accounts, counting, prices, coordination, events) behind the
 * single `Store` the rest of the gateway is wired with; the sixth, billing, stays a field of its
 * own (`billing`), named where it is used.
 * Each method hands the call to its concern and adds nothing: the concerns are the stores; this
 * is the plug. memory.ts and redis.ts add the backend's life cycle.
 */
export abstract class CompositeStore implements Store {
  abstract readonly kind: 'memory' | 'redis';
  abstract readonly billing: BillingStore;
  abstract readonly keys: KeyStore;

  constructor(
    readonly accounts: AccountStore,
    readonly counting: CountingStore,
    readonly prices: PriceStore,
    readonly coordination: CoordinationStore,
    readonly events: EventStore,
  ) {}

  abstract ping(): Promise<void>;
  abstract dataLost(): boolean;
  abstract close(): Promise<void>;

  findByKeyHash(keyHash: string): Promise<StoredAccount | null> {
    return this.accounts.findByKeyHash(keyHash);
  }
  getAccount(id: string): Promise<StoredAccount | null> {
    return this.accounts.getAccount(id);
  }
  createAccount(account: StoredAccount): Promise<void> {
    return this.accounts.createAccount(account);
  }
  updateAccount(id: string, patch: AccountPatch): Promise<StoredAccount | null> {
    return this.accounts.updateAccount(id, patch);
  }
  listAccounts(filter: AccountFilter, after: string | null, limit: number): Promise<AccountPage> {
    return this.accounts.listAccounts(filter, after, limit);
  }
  deleteAccount(id: string): Promise<StoredAccount | null> {
    return this.accounts.deleteAccount(id);
  }

  consume(spec: ConsumeSpec, day: string): Promise<ConsumeResult> {
    return this.counting.consume(spec, day);
  }
  consumeInto(spec: ConsumeSpec, day: string, receiver: ConsumeReceiver): void {
    this.counting.consumeInto(spec, day, receiver);
  }
  refund(accountId: string, periodId: string, day: string): Promise<void> {
    return this.counting.refund(accountId, periodId, day);
  }
  periodRecords(accountIds: string[], fromMs: number, toMs: number): Promise<PeriodRecord[][]> {
    return this.counting.periodRecords(accountIds, fromMs, toMs);
  }
  recordPlanChange(
    accountId: string,
    periodId: string,
    atMs: number,
    now: { plan: string; limit: number; endMs: number },
  ): Promise<void> {
    return this.counting.recordPlanChange(accountId, periodId, atMs, now);
  }
  usage(accountId: string, periodId: string): Promise<number> {
    return this.counting.usage(accountId, periodId);
  }
  recoverCrossings(
    resolve: (accountId: string, periodId: string) => Promise<ThresholdContext | null>,
  ): Promise<number> {
    return this.counting.recoverCrossings(resolve);
  }

  putEndpoint(endpoint: Endpoint): Promise<void> {
    return this.events.putEndpoint(endpoint);
  }
  getEndpoint(id: string): Promise<Endpoint | null> {
    return this.events.getEndpoint(id);
  }
  listEndpoints(): Promise<Endpoint[]> {
    return this.events.listEndpoints();
  }
  deleteEndpoint(id: string): Promise<boolean> {
    return this.events.deleteEndpoint(id);
  }
  enqueueEvent(event: OutboxEvent, onlyEndpoint?: string): Promise<boolean> {
    return this.events.enqueueEvent(event, onlyEndpoint);
  }
  claimDeliveries(holder: string, nowMs: number, leaseMs: number, max: number): Promise<Claimed[]> {
    return this.events.claimDeliveries(holder, nowMs, leaseMs, max);
  }
  recordAttempt(deliveryId: string, holder: string, outcome: AttemptOutcome): Promise<boolean> {
    return this.events.recordAttempt(deliveryId, holder, outcome);
  }
  listDeliveries(endpointId: string, limit: number): Promise<Delivery[]> {
    return this.events.listDeliveries(endpointId, limit);
  }
  outboxStats(): Promise<{ depth: number; oldestMs: number | null }> {
    return this.events.outboxStats();
  }

  listPriceSets(): Promise<PriceSet[]> {
    return this.prices.listPriceSets();
  }
  putPriceSet(set: PriceSet, replace: boolean): Promise<PriceChange | null> {
    return this.prices.putPriceSet(set, replace);
  }
  putPriceSets(sets: PriceSet[], replace: boolean): Promise<PriceChange[]> {
    return this.prices.putPriceSets(sets, replace);
  }
  deletePriceSet(date: string): Promise<PriceChange | null> {
    return this.prices.deletePriceSet(date);
  }

  lease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.coordination.lease(name, holder, ttlMs);
  }
  releaseLease(name: string, holder: string): Promise<void> {
    return this.coordination.releaseLease(name, holder);
  }
  putNote(name: string, value: string): Promise<void> {
    return this.coordination.putNote(name, value);
  }
  getNote(name: string): Promise<string | null> {
    return this.coordination.getNote(name);
  }
  subscribe(listener: (event: StoreEvent) => void): void {
    this.coordination.subscribe(listener);
  }
  reportInvalidKey(address: string, rule: ThrottleRule): Promise<void> {
    return this.coordination.reportInvalidKey(address, rule);
  }
  purgeCache(path: string | null): Promise<void> {
    return this.coordination.purgeCache(path);
  }
}
