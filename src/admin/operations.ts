import type { Clock } from '../clock.js';
import type { Config } from '../config/config-schema.js';
import type { PriceBook } from '../prices/book.js';
import { retentionMs } from '../quota/retention.js';
import type { Store } from '../store/store.js';
import { KeyEvents } from '../webhooks/key-events.js';
import { AccountOperations } from './account-operations.js';
import type { Audit } from './audit.js';
import { BillingOperations } from './billing-routes.js';
import { CacheOperations } from './cache-operations.js';
import { KeyOperations } from './key-operations.js';
import { LeakOperations } from './leak-operations.js';
import { MemberOperations } from './member-operations.js';
import { PriceOperations, type PriceOperationsDeps } from './price-operations.js';
import { SignUpOperations } from './signup-operations.js';
import { StripeOperations } from './stripe-operations.js';
import { UsageOperations } from './usage-operations.js';
import { WebhookOperations } from './webhook-routes.js';

/**
 * What operators can do, one class per concern, shared by the admin API and the CLI so there is
 * one implementation of each. Each class names the store concerns it uses.
 */
export interface Operations {
  /** The configuration they run under: their entries' schemas read it (plans, time zone, messages). */
  config: Config;
  accounts: AccountOperations;
  keys: KeyOperations;
  /** Leak reports (the public secret-scanning route hands them here). */
  leaks: LeakOperations;
  prices: PriceOperations;
  cache: CacheOperations;
  usage: UsageOperations;
  webhooks: WebhookOperations;
  billing: BillingOperations;
  /** The accounts' portal members. */
  members: MemberOperations;
  /** Portal sign-ups waiting for an operator. */
  signups: SignUpOperations;
  /** The Stripe mirror's subscriptions and unmatched events. */
  stripe: StripeOperations;
}

export interface OperationsOptions {
  /** The concerns the operations are handed, one or two each; not the store's life cycle. */
  store: Pick<
    Store,
    'accounts' | 'keys' | 'counting' | 'prices' | 'coordination' | 'events' | 'billing' | 'portal' | 'stripe'
  >;
  config: Config;
  book: PriceBook;
  clock: Clock;
  audit: Audit;
  priceEvents?: PriceOperationsDeps['events'];
  /** The billing exporters' names. */
  exporters: string[];
  /** An event was enqueued: the local worker looks at once (none in the CLI). */
  enqueued?: () => void;
}

/** Hands each concern's operations the part of the store it uses. */
export function buildOperations(o: OperationsOptions): Operations {
  const { store, config, clock, audit } = o;
  const keys = new KeyOperations({ keys: store.keys, clock, audit, retentionMs: retentionMs(config) });
  const keyEvents = new KeyEvents(store.events, clock.now, o.enqueued);
  keys.onChange((action, change, graceS) => {
    if (action === 'created') return keyEvents.created(change);
    if (action === 'revoked') return keyEvents.revoked(change);
    if (action === 'rotated') return keyEvents.rotated(change, graceS ?? 0);
  });
  const leaks = new LeakOperations({
    keys: store.keys,
    revoke: (accountId, keyId, from) => keys.revoke(accountId, keyId, from),
    expire: (accountId, keyId, at, from) => keys.update(accountId, keyId, { expires_at: at }, from),
    events: keyEvents,
    audit,
    clock,
    action: config.secret_scanning.action,
  });
  const accounts = new AccountOperations({
    accounts: store.accounts,
    counting: store.counting,
    plans: config.plans,
    zone: config.time_zone,
    clock,
    audit,
    retentionMs: retentionMs(config),
    keys,
  });
  return {
    config,
    accounts,
    keys,
    leaks,
    prices: new PriceOperations({
      prices: store.prices,
      book: o.book,
      zone: config.time_zone,
      clock,
      audit,
      events: o.priceEvents,
    }),
    cache: new CacheOperations({ coordination: store.coordination, audit }),
    usage: new UsageOperations({ accounts: store.accounts, counting: store.counting, config, now: clock.now }),
    webhooks: new WebhookOperations({
      events: store.events,
      accounts: store.accounts,
      config,
      clock,
      audit,
      enqueued: o.enqueued,
    }),
    billing: new BillingOperations(store.billing, o.exporters, audit),
    members: new MemberOperations({ accounts: store.accounts, portal: store.portal, clock, audit }),
    signups: new SignUpOperations({ portal: store.portal, accounts, plan: config.portal.signup_plan, clock, audit }),
    stripe: new StripeOperations(store.stripe, store.accounts, config.billing.stripe),
  };
}
