/**
 * One Stripe event applied to its account (docs/billing.md "Plans bought in Stripe"): the
 * account found, the customer linked, the subscription's state weighed by the order rule in the
 * store, and its effect made through the same plan change as `PATCH /admin/accounts/:id`.
 */
import type { Logger } from 'pino';
import type { StripeBillingConfig } from '../config/stripe-config.js';
import type { StripeEventResult } from '../metrics/gateway-metrics.js';
import type {
  AccountStatus,
  AccountStore,
  StoredAccount,
  StripeStore,
  SubscriptionRecord,
  SubscriptionState,
} from '../store/store.js';
import type { Happening } from './stripe-events.js';
import { effectOf } from './stripe-state.js';

/** The account change the admin API's PATCH makes, audited as made by `from`. */
export type AccountChange = (
  id: string,
  patch: {
    plan?: string;
    status?: AccountStatus;
    status_reason?: 'unpaid';
    external_ids?: { stripe_customer: string };
  },
  from: string,
) => Promise<void>;

export interface ApplyDeps {
  stripe: StripeStore;
  accounts: Pick<AccountStore, 'getAccount' | 'listAccounts'>;
  change: AccountChange;
  cfg: StripeBillingConfig;
  metric(result: StripeEventResult): void;
  log: Logger;
  now: () => number;
}

/** An event about a customer no account is linked to yet (its checkout may still come). */
export const NOT_YET = 'not_yet';
const CUSTOMER = /^cus_[A-Za-z0-9]{1,250}$/;
// Accounts looked at per page when a customer is found by the ids operators set.
const SCAN_PAGE = 500;

export class StripeApply {
  constructor(private readonly d: ApplyDeps) {}

  /** The account a subscription event is about, linked to its customer; null when unmatched (listed). */
  async accountFor(
    event: { id: string; type: string },
    h: Extract<Happening, { kind: 'subscription' }>,
    giveUp: boolean,
  ): Promise<StoredAccount | null | typeof NOT_YET> {
    const { customer } = h.state;
    const named = h.account ?? (customer === null ? null : await this.d.stripe.stripeCustomerAccount(customer));
    const account = named === null ? await this.byExternalId(customer) : await this.d.accounts.getAccount(named);
    if (account === null) {
      // Only an unknown customer may become known (its checkout's event is on its way); an
      // account named by the metadata or the customer's link that does not exist never will.
      if (named !== null) {
        await this.unmatched(event, h.state, named, `no account ${named}`);
        return null;
      }
      if (!giveUp) return NOT_YET;
      await this.unmatched(event, h.state, named, `no account has Stripe customer ${customer ?? '(none)'}`);
      return null;
    }
    if (customer !== null && !(await this.link(event, account, customer, h.state))) return null;
    return account;
  }

  /** `checkout.session.completed`: the customer linked to the account in `client_reference_id`. */
  async checkout(event: { id: string; type: string }, h: Extract<Happening, { kind: 'checkout' }>): Promise<void> {
    if (h.accountId === null || h.customer === null) return;
    const account = await this.d.accounts.getAccount(h.accountId);
    if (account === null) {
      await this.unmatched(event, null, h.accountId, `no account ${h.accountId} (client_reference_id)`, h.customer);
      return;
    }
    await this.link(event, account, h.customer, null);
  }

  /** The order rule, then the state's effect. */
  async subscription(accountId: string, state: SubscriptionState): Promise<void> {
    const advanced = await this.d.stripe.stripeAdvance(accountId, state, this.d.now());
    if (advanced === null) {
      this.d.metric('ignored_old');
      return;
    }
    await this.reconcile(accountId, advanced.record, true);
    if (advanced.applied === 'new') this.d.metric('applied');
  }

  /**
   * Brings the account to what its subscription's state asks now: at an event, and when its
   * grace or period ends (the timer). Changes nothing when it is there already.
   */
  async reconcile(accountId: string, r: SubscriptionRecord, atEvent: boolean): Promise<void> {
    const account = await this.d.accounts.getAccount(accountId);
    if (account === null) return this.d.stripe.stripeSetTimer(accountId, null);
    const effect = effectOf(r, account, this.d.cfg, this.d.now());
    if (effect.unmatched !== null && atEvent) {
      this.d.log.warn(
        { event_id: r.event_id, account_id: accountId, lookup_key: r.price },
        `stripe: lookup key ${r.price} maps to no plan (billing.stripe.plans); the account is left as it is`,
      );
      await this.unmatched({ id: r.event_id, type: r.event_type }, r, accountId, effect.unmatched);
    }
    const patch: { plan?: string; status?: AccountStatus; status_reason?: 'unpaid' } = {};
    if (effect.plan !== null && effect.plan !== account.plan) patch.plan = effect.plan;
    if (effect.status !== null && effect.status !== account.status) patch.status = effect.status;
    // Refused with billing.stripe.unpaid_message; made active (by anyone), the reason goes.
    if (patch.status === 'inactive') patch.status_reason = 'unpaid';
    if (patch.plan !== undefined || patch.status !== undefined) await this.d.change(accountId, patch, 'stripe');
    if (effect.suspended !== r.suspended)
      await this.d.stripe.stripeMarkSuspended(accountId, r.event_id, effect.suspended);
    await this.d.stripe.stripeSetTimer(accountId, effect.timerMs);
  }

  /**
   * Links the customer to the account: set when the account has none, never replaced. A
   * customer of another account, or an account of another customer, is a conflict: unmatched.
   */
  private async link(
    event: { id: string; type: string },
    account: StoredAccount,
    customer: string,
    state: SubscriptionState | null,
  ): Promise<boolean> {
    const conflict = (reason: string) => this.unmatched(event, state, account.id, reason, customer).then(() => false);
    if (!CUSTOMER.test(customer)) return conflict(`"${customer}" is not a Stripe customer id`);
    const linked = await this.d.stripe.stripeCustomerAccount(customer);
    if (linked !== null && linked !== account.id)
      return conflict(`Stripe customer ${customer} belongs to account ${linked}`);
    const held = account.external_ids?.stripe_customer;
    if (held !== undefined && held !== customer)
      return conflict(`account ${account.id} has Stripe customer ${held}; the event names ${customer}`);
    if (held === undefined) await this.d.change(account.id, { external_ids: { stripe_customer: customer } }, 'stripe');
    if (linked === null) await this.d.stripe.stripeLinkCustomer(customer, account.id);
    return true;
  }

  /** An account whose `stripe_customer` an operator set: found once by a walk of the accounts, then linked. */
  private async byExternalId(customer: string | null): Promise<StoredAccount | null> {
    if (customer === null) return null;
    let after: string | null = null;
    do {
      const page = await this.d.accounts.listAccounts({}, after, SCAN_PAGE);
      const found = page.accounts.find((a) => a.external_ids?.stripe_customer === customer);
      if (found !== undefined) return found;
      after = page.next;
    } while (after !== null);
    return null;
  }

  async unmatched(
    event: { id: string; type: string },
    state: Pick<SubscriptionState, 'customer' | 'subscription_id' | 'price'> | null,
    accountId: string | null,
    reason: string,
    customer: string | null = state?.customer ?? null,
  ): Promise<void> {
    this.d.metric('unmatched');
    this.d.log.warn(
      { event_id: event.id, event_type: event.type, account_id: accountId, customer },
      `stripe: ${reason}`,
    );
    await this.d.stripe.stripeAddUnmatched({
      event_id: event.id,
      event_type: event.type,
      account_id: accountId,
      customer,
      subscription_id: state?.subscription_id ?? null,
      price: state?.price ?? null,
      reason,
      at: new Date(this.d.now()).toISOString(),
    });
  }
}
