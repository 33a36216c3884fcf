import type { AccountStore } from './accounts/interface.js';
import type { BillingStore } from './billing/interface.js';
import type { CoordinationStore } from './coordination/interface.js';
import type { CountingStore } from './counting/interface.js';
import type { EventStore } from './events/interface.js';
import type { KeyStore } from './keys/interface.js';
import type { PriceStore } from './prices/interface.js';

// Callers outside the store name its types from here, whichever concern defines them.
export type {
  Account,
  AccountFilter,
  AccountPage,
  AccountPatch,
  AccountStatus,
  AccountStore,
  ExternalIds,
  StoredAccount,
} from './accounts/interface.js';
export type { BillingEvent, BillingStore } from './billing/interface.js';
export type { CoordinationStore, StoreEvent, ThrottleRule } from './coordination/interface.js';
export type {
  Alerts,
  ConsumeReceiver,
  ConsumeResult,
  ConsumeSpec,
  CountingStore,
  PeriodMeta,
  PeriodRecord,
  PlanChange,
} from './counting/interface.js';
export type { AttemptOutcome, Claimed, Delivery, Endpoint, EventStore } from './events/interface.js';
export type {
  AccountKey,
  ApiKey,
  KeyChange,
  KeyPatch,
  KeyScope,
  KeyStore,
  StoredKey,
} from './keys/interface.js';
export type { PriceChange, PriceStore } from './prices/interface.js';

/**
 * The shared state of the gateway, as one object for wiring: the five concerns (each an
 * interface of its own in store/<concern>/interface.ts, with a memory and a Redis
 * implementation beside it) and the backend's life cycle. memory.ts and redis.ts bundle them.
 */
export interface Store extends AccountStore, CountingStore, PriceStore, CoordinationStore, EventStore {
  readonly kind: 'memory' | 'redis';
  /** The concerns by name: a consumer takes the ones it uses (the forwarding methods are going). */
  readonly accounts: AccountStore;
  readonly counting: CountingStore;
  readonly prices: PriceStore;
  readonly coordination: CoordinationStore;
  readonly events: EventStore;
  /** An account's keys (they live with the account; a change of one is a change of it). */
  readonly keys: KeyStore;
  /** The billing exporters' cursors and outbox: a concern of its own, named where it is used. */
  readonly billing: BillingStore;
  /** Resolves when the store answers. */
  ping(): Promise<void>;
  /** True once the store was found to have lost its data since this process started (Redis restarted empty). */
  dataLost(): boolean;
  close(): Promise<void>;
}
