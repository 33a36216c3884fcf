import type { AccountStore } from './accounts/interface.js';
import type { BillingStore } from './billing/interface.js';
import type { CoordinationStore } from './coordination/interface.js';
import type { CountingStore } from './counting/interface.js';
import type { EventStore } from './events/interface.js';
import type { KeyStore } from './keys/interface.js';
import type { PortalStore } from './portal/interface.js';
import type { PriceStore } from './prices/interface.js';
import type { StripeStore } from './stripe/interface.js';

// Callers outside the store name its types from here, whichever concern defines them.
export type {
  Account,
  AccountFilter,
  AccountPage,
  AccountPatch,
  AccountStatus,
  AccountStore,
  ExternalIds,
  Grant,
  GrantLedger,
  StoredAccount,
} from './accounts/interface.js';
export type { BillingEvent, BillingStore } from './billing/interface.js';
export type {
  AttemptChange,
  AttemptGrant,
  CoordinationStore,
  StoreEvent,
  ThrottleRule,
} from './coordination/interface.js';
export type {
  Alerts,
  BurstSpec,
  BurstState,
  ConsumeReceiver,
  ConsumeResult,
  ConsumeSpec,
  CountingStore,
  PeriodMeta,
  PeriodRecord,
  PlanChange,
  Threshold,
} from './counting/interface.js';
export type {
  AttemptOutcome,
  AttemptRecord,
  Claimed,
  Delivery,
  Endpoint,
  EventStore,
} from './events/interface.js';
export { ANSWER_KEPT_BYTES } from './events/interface.js';
export type {
  AccountKey,
  ApiKey,
  KeyChange,
  KeyPatch,
  KeyScope,
  KeyStore,
  StoredKey,
} from './keys/interface.js';
export type {
  Member,
  MemberRole,
  OnceKind,
  Passkey,
  PortalStore,
  Session,
  SessionLife,
  SignUp,
} from './portal/interface.js';
export type { PriceChange, PriceStore } from './prices/interface.js';
export type {
  InboxItem,
  StripeStore,
  SubscriptionRecord,
  SubscriptionState,
  UnmatchedEntry,
} from './stripe/interface.js';

/**
 * What a backend can do that its callers must know, named by the question each asks: the
 * gateway decides by these, never by which backend it runs on.
 */
export interface StoreCapabilities {
  /**
   * Other gateway processes (and the CLI) read and write the same data: a throttle report reaches
   * every instance, and what this process does not hold (a price file, demo accounts) can be
   * managed from outside it. False: the data lives in this process only.
   */
  readonly sharedAcrossProcesses: boolean;
  /**
   * A usage threshold crossing can be counted and left behind, not yet moved to the outbox, by a
   * process that died between the two steps: `counting.recoverCrossings` has something to find.
   */
  readonly crossingsCanBeStranded: boolean;
}

/**
 * The shared state of the gateway, as a plain record for the composition root: the concerns by
 * name (each an interface of its own in store/<concern>/interface.ts, with a memory and a Redis
 * implementation beside it), what the backend can do, and its life cycle. A consumer takes the
 * concerns it uses, never the record. memory/memory-store.ts and redis/redis-store.ts build it.
 */
export interface Store {
  /** The backend's name, for messages and tests; code decides by `capabilities`. */
  readonly kind: string;
  readonly capabilities: StoreCapabilities;
  readonly accounts: AccountStore;
  readonly counting: CountingStore;
  readonly prices: PriceStore;
  readonly coordination: CoordinationStore;
  readonly events: EventStore;
  /** An account's keys (they live with the account; a change of one is a change of it). */
  readonly keys: KeyStore;
  /** The billing exporters' cursors and outbox. */
  readonly billing: BillingStore;
  /** The customer portal's members, sign-in links and sessions. */
  readonly portal: PortalStore;
  /** The Stripe mirror: its inbox of events and each account's subscription. */
  readonly stripe: StripeStore;
  /** Resolves when the store answers. */
  ping(): Promise<void>;
  /**
   * Milliseconds since this process found the store to have lost its data (Redis restarted
   * empty), or null when it has not since it started.
   */
  msSinceDataLoss(): number | null;
  close(): Promise<void>;
}
