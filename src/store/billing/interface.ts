/**
 * One usage event for a billing system: the growth of an account's ledger between two of its
 * running totals (`from`, `to`), as one exporter sends it. Written to the store before it is
 * sent, and sent unchanged until the receiver takes it: its id is derived from the exporter,
 * the account and the span, so a resend is the same event and the receiver drops it.
 */
export interface BillingEvent {
  id: string;
  exporter: string;
  account_id: string;
  /** Who the receiver bills: the Stripe customer, or the CloudEvents subject. */
  subject: string;
  from: number;
  to: number;
  /** `to - from`: requests counted in the span. */
  value: number;
  /** The end of the interval the event reports, in ms. */
  timestamp_ms: number;
  attempts: number;
  /** Not sent again before this (backoff, `Retry-After`). */
  next_attempt_ms: number;
  last_error: string | null;
  /** Set when the receiver refused it for good (a 4xx other than 429): listed, sent again only on retry. */
  failed_at_ms: number | null;
}

/** The ledger of one account as the exporter reads it: each live period's count. */
export type PeriodCounts = Array<[periodId: string, used: number]>;

/**
 * The exporters' cursor and write-ahead outbox, per exporter and account. Every call is atomic
 * for its account, so two gateways (or a gateway and its restarted self) never derive two
 * different events from one span. Proven for every backend by test/store/contract/billing.ts.
 */
export interface BillingStore {
  /**
   * The account's events not yet taken by the receiver, oldest first. When there is none, and
   * the ledger grew since the last event, first writes one for that growth with `subject` and
   * `timestampMs`. A ledger that shrank (a refund) writes nothing: the shortfall is netted
   * against the next growth.
   */
  billingPrepare(exporter: string, accountId: string, subject: string, timestampMs: number): Promise<BillingEvent[]>;
  /** The events of the accounts that have some outstanding (sent but not taken, or failed). */
  billingOutstanding(exporter: string): Promise<BillingEvent[]>;
  /** The receiver took it: forgotten. */
  billingAck(event: BillingEvent): Promise<void>;
  /** Not taken this time: sent again from `nextMs`. */
  billingDefer(event: BillingEvent, nextMs: number, error: string): Promise<void>;
  /** Refused for good: kept as failed until `billingRetry`. */
  billingFail(event: BillingEvent, atMs: number, error: string): Promise<void>;
  /** Failed events back to the outbox (all of them, or the one with `id`); how many. */
  billingRetry(exporter: string, id: string | null): Promise<number>;
}
