import type { EndpointOrigin } from '../../events/addresses.js';
import type { EventType, OutboxEvent } from '../../events/event.js';

/** A webhook endpoint as the store keeps it: with its secret, which it must keep to sign. */
export interface Endpoint {
  id: string;
  url: string;
  events: EventType[];
  account_id: string | null;
  description: string | null;
  secret: string;
  /** The secret before the last rotation, still signing beside the new one until `previous_until_ms`. */
  previous_secret: string | null;
  previous_until_ms: number | null;
  created_at: string;
  /**
   * Who made it, which decides the addresses it may reach (events/addresses.ts `endpointPolicy`).
   * A record stored before it was kept reads as the operator's: the portal's came later.
   */
  created_via: EndpointOrigin;
}

export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** One attempt of a delivery, as its log keeps it. */
export interface AttemptRecord {
  /** Unix ms when the attempt began. */
  at_ms: number;
  status: number | null;
  /** How long it took, ms. */
  ms: number;
  /** The start of the receiver's answer (ANSWER_KEPT_BYTES), as text. */
  answer: string;
  error: string | null;
}

/** One event for one endpoint: what has been tried and what comes next. */
export interface Delivery {
  /** `<event id>.<endpoint id>` */
  id: string;
  event_id: string;
  endpoint_id: string;
  type: EventType;
  body: string;
  attempts: number;
  state: DeliveryState;
  /** HTTP status of the last attempt, null when it got none (refused, timeout, unreachable). */
  last_status: number | null;
  last_error: string | null;
  /** Unix ms of the next attempt; null once delivered or failed. */
  next_attempt_ms: number | null;
  created_ms: number;
  /** Its latest ATTEMPTS_KEPT attempts, oldest first. */
  log: AttemptRecord[];
}

/** A delivery taken for one attempt, with its endpoint as it is now (URL and secrets). */
export interface Claimed {
  delivery: Delivery;
  endpoint: Endpoint;
}

export interface AttemptOutcome {
  status: number | null;
  error: string | null;
  delivered: boolean;
  /** When to try again; null: no more (delivered, or failed for good). */
  nextAttemptMs: number | null;
  /** When the attempt ended; it began `ms` before. */
  nowMs: number;
  ms: number;
  /** The start of the answer, at most ANSWER_KEPT_BYTES bytes. */
  answer: string;
}

// How long a delivery's record stays listed after it is delivered or failed, and how long an
// event id is remembered (a second enqueue of the same id within it is dropped).
export const DELIVERY_KEEP_MS = 30 * 86_400_000;
export const EVENT_ID_KEEP_MS = 30 * 86_400_000;
/**
 * Deliveries of one endpoint claimed at a time, across every gateway: a receiver that hangs
 * holds this many attempts, and the rest of the outbox goes on.
 */
export const ENDPOINT_CONCURRENCY = 2;
/** Deliveries listed per endpoint. */
export const DELIVERIES_KEPT = 100;
/** Attempts kept in a delivery's log (the latest): the default retries make 8, a replay adds one each. */
export const ATTEMPTS_KEPT = 10;
/** Bytes of a receiver's answer kept with each attempt. */
export const ANSWER_KEPT_BYTES = 200;

/**
 * Webhook endpoints and the durable outbox: events fanned out into one delivery per matching
 * endpoint, claimed for one attempt at a time. Proven for every backend by
 * test/store/contract/events.ts.
 */
export interface EventStore {
  putEndpoint(endpoint: Endpoint): Promise<void>;
  /**
   * Adds an endpoint of an account unless that account has `max` already (counted and added in
   * one step: requests at the same time never pass the bound). False when it has.
   */
  addAccountEndpoint(endpoint: Endpoint & { account_id: string }, max: number): Promise<boolean>;
  getEndpoint(id: string): Promise<Endpoint | null>;
  /** Every endpoint, or those of one account. */
  listEndpoints(accountId?: string): Promise<Endpoint[]>;
  /** Removes the endpoint and its pending deliveries. False when there was none. */
  deleteEndpoint(id: string): Promise<boolean>;
  /**
   * Adds an event unless one of the same id was added before (in EVENT_ID_KEEP_MS): one delivery
   * per endpoint that subscribes to its type and whose account scope admits it, or only to
   * `onlyEndpoint` (a test event). Atomic: every gateway may offer the same event. True when new.
   */
  enqueueEvent(event: OutboxEvent, onlyEndpoint?: string): Promise<boolean>;
  /**
   * Takes up to `max` deliveries due at `nowMs` for `holder`: none is due again before
   * `nowMs + leaseMs`, so no other holder attempts it meanwhile; a holder that dies leaves it
   * to be taken again once the lease has run out. Oldest due first, and never more than
   * ENDPOINT_CONCURRENCY of one endpoint under claim at once (by any holder): the deliveries of
   * an endpoint at its bound wait, and do not stand in front of other endpoints' deliveries.
   */
  claimDeliveries(holder: string, nowMs: number, leaseMs: number, max: number): Promise<Claimed[]>;
  /** Records an attempt. Ignored (false) when `holder` no longer holds the delivery. */
  recordAttempt(deliveryId: string, holder: string, outcome: AttemptOutcome): Promise<boolean>;
  /**
   * Makes a delivery due at `nowMs` for one more attempt, whatever its state (a finished one is
   * pending again, and listed until it ends again). One under claim or waiting at its endpoint's
   * bound is left as it is: it is about to be attempted. False when there is no such delivery.
   */
  replayDelivery(deliveryId: string, nowMs: number): Promise<boolean>;
  /** An endpoint's latest deliveries, newest first. */
  listDeliveries(endpointId: string, limit: number): Promise<Delivery[]>;
  /** Deliveries pending, and when the oldest of them was created (null when none). */
  outboxStats(): Promise<{ depth: number; oldestMs: number | null }>;
}
