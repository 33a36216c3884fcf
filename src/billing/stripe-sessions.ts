/**
 * Stripe Checkout and customer-portal sessions for the portal's plan page, made with the official
 * `stripe` package and STRIPE_API_KEY, sent to `billing.stripe.api_base` (Stripe, a proxy, or a
 * test's receiver).
 */
import type Stripe from 'stripe';
import type { StripeBillingConfig } from '../config/stripe-config.js';
import { GatewayError } from '../failures.js';
import { ACCOUNT_METADATA } from './stripe-events.js';

export interface CheckoutRequest {
  accountId: string;
  /** A price's lookup_key, or its id (`price_…`), as `billing.stripe.plans` names it. */
  price: string;
  /** The account's Stripe customer, when it has one (its card and invoices are reused). */
  customer: string | null;
  successUrl: string;
  cancelUrl: string;
}

/**
 * Each call to Stripe answers within this, or the portal says so (504): the customer waits on
 * it, and clicks again rather than wait longer. Not retried: checkout makes two calls, so the
 * customer waits at most twice this (the package's defaults, 80 s and two retries, held the
 * portal's answer for minutes).
 */
const CALL_MS = 5000;

/** Stripe did not answer (`timedOut`), or could not be reached. */
export class StripeUnreachable extends Error {
  constructor(
    message: string,
    readonly timedOut: boolean,
  ) {
    super(message);
    this.name = 'StripeUnreachable';
  }
}

/** The package's connection failure (its own timeout included), as StripeUnreachable. */
function unreachable(err: unknown): never {
  const e = err as { type?: string; detail?: { code?: string }; message?: string };
  if (e.type === 'StripeConnectionError')
    throw new StripeUnreachable(e.message ?? 'no connection to Stripe', e.detail?.code === 'ETIMEDOUT');
  throw err;
}

export class StripeSessions {
  // The package is imported here, where checkout is on: it costs every start ~0.2 s.
  private readonly client: Promise<Stripe>;

  constructor(cfg: Pick<StripeBillingConfig, 'api_base'>, apiKey: string) {
    const u = new URL(cfg.api_base);
    const protocol = u.protocol === 'http:' ? 'http' : 'https';
    this.client = import('stripe').then(
      ({ default: Client }) =>
        new Client(apiKey, {
          host: u.hostname,
          port: Number(u.port || (protocol === 'http' ? 80 : 443)),
          protocol,
          timeout: CALL_MS,
          maxNetworkRetries: 0,
          appInfo: { name: 'fuel-price-gateway' },
        }),
    );
  }

  /**
   * A Checkout Session for a subscription to the price, for the account (client_reference_id,
   * and in the subscription's metadata so its events name the account before the checkout's
   * own event arrives). Its URL, where the customer is sent.
   */
  checkout(r: CheckoutRequest): Promise<string> {
    return this.session(r).catch(unreachable);
  }

  private async session(r: CheckoutRequest): Promise<string> {
    const price = r.price.startsWith('price_') ? r.price : await this.priceOf(r.price);
    const session = await (await this.client).checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price, quantity: 1 }],
      client_reference_id: r.accountId,
      ...(r.customer === null ? {} : { customer: r.customer }),
      subscription_data: { metadata: { [ACCOUNT_METADATA]: r.accountId } },
      success_url: r.successUrl,
      cancel_url: r.cancelUrl,
    });
    if (session.url === null) throw new GatewayError('INTERNAL', 'Stripe answered a Checkout Session without a URL');
    return session.url;
  }

  /** A customer-portal session (cards, invoices, cancel), coming back to `returnUrl`. */
  async manage(customer: string, returnUrl: string): Promise<string> {
    const client = await this.client;
    return (await client.billingPortal.sessions.create({ customer, return_url: returnUrl }).catch(unreachable)).url;
  }

  /** Checkout takes a price id: the active price with this lookup_key. */
  private async priceOf(lookupKey: string): Promise<string> {
    const list = await (await this.client).prices.list({ lookup_keys: [lookupKey], active: true, limit: 1 });
    const found = list.data[0];
    if (found === undefined) throw new GatewayError('NOT_FOUND', `no active Stripe price has lookup_key ${lookupKey}`);
    return found.id;
  }
}
