/**
 * What the portal is handed by the composition root (assemble/portal-builder.ts): the admin API's
 * own operations, so a change made here is the same change, audited, announced and raising the
 * same events. The portal imports none of them (features do not import admin/).
 */
import type { AccountEventType } from '../../events/event.js';
import type { CreateKeyInput, KeyView, PatchKeyInput, RotateInput } from '../../keys/api-keys.js';
import type { Usage } from '../../quota/usage.js';
import type { PortalStore } from '../../store/store.js';

/** Sends a sign-in link to an address (by SMTP, or printed on the console). */
export type SendLink = (to: string, link: string) => Promise<void>;

export interface PortalAccounts {
  /** Makes an account on `plan` for a sign-up (the admin API's create): its id, and its first key's secret. */
  signUp(plan: string, from: string): Promise<{ id: string; api_key: string }>;
  /** The account's id and plan; null once it is gone. */
  find(id: string): Promise<{ id: string; plan: string } | null>;
}

export interface PortalKeys {
  list(accountId: string): Promise<{ keys: KeyView[] }>;
  create(accountId: string, input: CreateKeyInput, from: string): Promise<{ key: KeyView; api_key: string }>;
  rotate(
    accountId: string,
    keyId: string,
    input: RotateInput,
    from: string,
  ): Promise<{ key: KeyView; api_key: string; previous: KeyView }>;
  /** Its name, scopes, allowlist or expiry: the admin API's `PATCH`. */
  update(accountId: string, keyId: string, input: PatchKeyInput, from: string): Promise<{ key: KeyView }>;
  revoke(accountId: string, keyId: string, from: string): Promise<unknown>;
}

export interface PortalUsage {
  /** The period in progress, and requests by day over the last `days` days. */
  usage(accountId: string, days: number): Promise<{ usage: Usage; days: Array<{ day: string; requests: number }> }>;
  /** The same days as the admin API's CSV export (formula-safe). */
  csv(accountId: string, days: number): Promise<string>;
}

/** An account's own webhook endpoint, as the portal shows it: never its secret. */
export interface WebhookView {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  created_at: string;
}

/** One delivery of the log: its event and its latest attempts (`body`: the answer's first 200 bytes). */
export interface DeliveryLog {
  id: string;
  event_type: string;
  state: string;
  created_at: string;
  next_attempt: string | null;
  attempts: Array<{ at: string; status: number | null; ms: number; body: string; error: string | null }>;
}

/**
 * The account's own webhook endpoints, through the admin API's webhook operations (the same URL
 * checks, audit lines and delivery worker). Each takes the session's account: an endpoint of
 * another account is not found (404).
 */
export interface PortalWebhooks {
  list(accountId: string): Promise<WebhookView[]>;
  /** The signing secret is in this answer only. */
  create(
    accountId: string,
    input: { url: string; events: AccountEventType[]; description?: string | undefined },
    from: string,
  ): Promise<{ endpoint: WebhookView; secret: string }>;
  remove(accountId: string, id: string, from: string): Promise<unknown>;
  /** A `webhook.test` event to this endpoint, delivered as any other. */
  test(accountId: string, id: string, from: string): Promise<{ event_id: string }>;
  deliveries(accountId: string, id: string): Promise<DeliveryLog[]>;
  replay(accountId: string, id: string, deliveryId: string, from: string): Promise<unknown>;
}

/** The account's plan as the plan section shows it (plan-section.ts). */
export interface PlanFacts {
  plan: string;
  /** Requests per period (the account's own, else the plan's); null: set per account and not set. */
  limit: number | null;
  period: 'trial' | 'monthly';
  trial_days: number | null;
  burst: { limit: number; window_s: number } | null;
  /** Its Stripe customer, when it has one. */
  customer: string | null;
  /** It holds a Stripe subscription that has not ended: its plan changes in Stripe's customer portal. */
  subscribed: boolean;
}

/** Stripe Checkout for the plan section, when `billing.stripe.checkout` is on. */
export interface PortalBilling {
  /** Each mapped plan: the price (lookup_key or id) that buys it. */
  offers: ReadonlyArray<{ price: string; plan: string; limit: number | null }>;
  /** A Checkout Session's URL. */
  checkout(o: {
    accountId: string;
    price: string;
    customer: string | null;
    successUrl: string;
    cancelUrl: string;
  }): Promise<string>;
  /** A customer-portal session's URL. */
  manage(customer: string, returnUrl: string): Promise<string>;
}

export interface PortalDeps {
  store: PortalStore;
  /** The account's plan, for the plan section; null once the account is gone. */
  planFacts(accountId: string): Promise<PlanFacts | null>;
  /** Checkout, or null when `billing.stripe.checkout` is off. */
  billing: PortalBilling | null;
  accounts: PortalAccounts;
  keys: PortalKeys;
  usage: PortalUsage;
  webhooks: PortalWebhooks;
  send: SendLink;
}
