/**
 * Stripe's part in the tests: events shaped as Stripe sends them (API 2025+: the period end on
 * the subscription's items), signed with the stripe package's own test header, posted over HTTP.
 */
import Stripe from 'stripe';

export const WEBHOOK_SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuv';

export interface StripeEvent {
  id: string;
  object: 'event';
  type: string;
  created: number;
  api_version: string;
  livemode: false;
  data: { object: Record<string, unknown> };
}

let seq = 0;
export const eventId = (): string => `evt_test${process.pid}x${++seq}${Math.random().toString(36).slice(2, 8)}`;

const event = (type: string, created: number, object: Record<string, unknown>): StripeEvent => ({
  id: eventId(),
  object: 'event',
  type,
  created,
  api_version: '2026-10-28.endive',
  livemode: false,
  data: { object },
});

export interface SubscriptionFacts {
  sub: string;
  customer: string;
  status: string;
  lookupKey: string;
  /** Unix seconds. */
  periodEnd: number;
  account?: string;
}

export const subscriptionEvent = (
  type: 'created' | 'updated' | 'deleted',
  created: number,
  f: SubscriptionFacts,
): StripeEvent =>
  event(`customer.subscription.${type}`, created, {
    id: f.sub,
    object: 'subscription',
    customer: f.customer,
    status: f.status,
    metadata: f.account === undefined ? {} : { fpg_account: f.account },
    items: {
      object: 'list',
      data: [
        {
          id: `si_${f.sub}`,
          object: 'subscription_item',
          current_period_end: f.periodEnd,
          price: { id: `price_${f.lookupKey}`, object: 'price', lookup_key: f.lookupKey },
        },
      ],
    },
  });

export const invoiceEvent = (
  type: 'paid' | 'payment_failed',
  created: number,
  f: Pick<SubscriptionFacts, 'sub' | 'customer'>,
): StripeEvent =>
  event(`invoice.${type}`, created, {
    id: `in_${Math.random().toString(36).slice(2, 10)}`,
    object: 'invoice',
    customer: f.customer,
    parent: { type: 'subscription_details', subscription_details: { subscription: f.sub } },
    lines: { object: 'list', data: [] },
  });

export const checkoutCompleted = (created: number, account: string, customer: string, sub: string): StripeEvent =>
  event('checkout.session.completed', created, {
    id: `cs_test_${Math.random().toString(36).slice(2, 10)}`,
    object: 'checkout.session',
    mode: 'subscription',
    client_reference_id: account,
    customer,
    subscription: sub,
  });

/** The Stripe-Signature Stripe would send for `payload` (at `timestamp`, unix seconds: default now). */
export const signatureOf = (payload: string, timestamp?: number, secret = WEBHOOK_SECRET): string =>
  Stripe.webhooks.generateTestHeaderString({ payload, secret, ...(timestamp === undefined ? {} : { timestamp }) });

/** Posts the event as Stripe does: the raw JSON, signed. */
export function deliver(
  base: string,
  e: StripeEvent | string,
  over: { signature?: string; body?: string } = {},
): Promise<Response> {
  const payload = typeof e === 'string' ? e : JSON.stringify(e);
  return fetch(`${base}/billing/stripe/webhook`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'stripe-signature': over.signature ?? signatureOf(payload),
      'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
    },
    body: over.body ?? payload,
  });
}

/** A request the Stripe API receiver took: its method, path (with query), form fields and headers. */
export interface StripeApiRequest {
  method: string;
  path: string;
  form: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
}

export interface StripeApi {
  url: string;
  requests: StripeApiRequest[];
  /** Set: requests are recorded and never answered (a Stripe that hangs). */
  hang: boolean;
  close(): Promise<void>;
}

/**
 * Stripe's API on loopback, as far as the portal's plan page uses it: a price found by its
 * lookup_key, Checkout Sessions and customer-portal sessions. Records every request.
 */
export async function startStripeApi(): Promise<StripeApi> {
  const { createServer } = await import('node:http');
  const requests: StripeApiRequest[] = [];
  let n = 0;
  const api: StripeApi = {
    url: '',
    requests,
    hang: false,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const url = req.url ?? '/';
      const form = Object.fromEntries(new URLSearchParams(req.method === 'GET' ? (url.split('?')[1] ?? '') : body));
      requests.push({ method: req.method ?? '', path: url, form, headers: req.headers });
      if (api.hang) return;
      const send = (status: number, value: unknown): void => {
        const text = JSON.stringify(value);
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${++n}` });
        res.end(text);
      };
      const path = url.split('?')[0];
      if (req.method === 'GET' && path === '/v1/prices') {
        const key = form['lookup_keys[0]'] ?? '';
        return send(200, {
          object: 'list',
          url: '/v1/prices',
          has_more: false,
          data: [{ id: `price_for_${key}`, object: 'price', lookup_key: key, active: true }],
        });
      }
      if (req.method === 'POST' && path === '/v1/checkout/sessions')
        return send(200, {
          id: `cs_test_${n}`,
          object: 'checkout.session',
          url: `https://checkout.stripe.com/c/pay/cs_test_${n}`,
        });
      if (req.method === 'POST' && path === '/v1/billing_portal/sessions')
        return send(200, {
          id: `bps_${n}`,
          object: 'billing_portal.session',
          url: `https://billing.stripe.com/p/session/test_${n}`,
        });
      send(404, {
        error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${path})` },
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  api.url = `http://127.0.0.1:${port}`;
  return api;
}
