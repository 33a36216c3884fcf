/**
 * `POST /billing/stripe/webhook`: Stripe's subscription and invoice events (docs/billing.md
 * "Plans bought in Stripe"). The signature is checked with the official package's
 * `webhooks.constructEvent` (300 s tolerance); a verified event is written to the store (its id
 * kept 30 days, so a second delivery is dropped) before the 200, and applied from there by the
 * mirror, so the answer never waits on the account change and a crash after it loses nothing.
 */
import { z } from 'zod';
import type { Config } from '../../config/config-schema.js';
import type { Exchange, RouteDef } from '../../http/core-types.js';
import { crashed, fail, readBody, send, storeFailed } from '../../http/metered/pipeline.js';
import { errorResponses, type PostItem } from '../../http/openapi.js';
import type { StripeEventResult } from '../../metrics/gateway-metrics.js';

export const STRIPE_WEBHOOK_PATH = '/billing/stripe/webhook';
const MAX_EVENT_BYTES = 1024 * 1024;
/** Stripe's default: a signature older than this is refused, so a captured request cannot be replayed later. */
const TOLERANCE_S = 300;

/**
 * What the inbox needs of a verified event. Stripe never sends less, but a signed body that is
 * not an event (no id, a number for one, `null`) would be kept under no id, and on Redis stop
 * the mirror at the first item it cannot read back: refused here instead.
 */
const eventEnvelope = z.looseObject({
  id: z.string().min(1).max(255),
  type: z.string().min(1).max(255),
  created: z.number().int(),
  data: z.looseObject({ object: z.looseObject({}) }),
});

/** Keeps a verified event for the mirror; false when its id was received before. */
export type StripeInbox = (event: { id: string; type: string; body: string }) => Promise<boolean>;

export interface StripeWebhookDeps {
  /** The endpoint's signing secret (env STRIPE_WEBHOOK_SECRET); the route is not served without one. */
  secret: string;
  inbox: StripeInbox;
  metric(result: StripeEventResult): void;
}

/** The package's signature check: imported only where the route is served (it costs every start ~0.2 s). */
type Verifier = Promise<typeof import('stripe')['default']['webhooks']>;

export function stripeWebhookRoutes(config: Config, deps: StripeWebhookDeps | null): RouteDef[] {
  if (deps === null) return [];
  const verifier: Verifier = import('stripe').then(({ default: Stripe }) => Stripe.webhooks);
  return [
    {
      path: STRIPE_WEBHOOK_PATH,
      route: { kind: 'handler', name: 'stripe-webhook', methods: ['POST'], handle: (x) => receive(x, deps, verifier) },
      openapi: describe(config),
    },
  ];
}

function receive(x: Exchange, deps: StripeWebhookDeps, verifier: Verifier): void {
  const { req } = x;
  const signature = req.headers['stripe-signature'];
  if (Number(req.headers['content-length'] ?? 0) > MAX_EVENT_BYTES) return unread(x, 'stripe_event_too_large');
  Promise.all([readBody(req, MAX_EVENT_BYTES), verifier])
    .then(([body, webhooks]) => {
      if (body === null) return unread(x, 'stripe_event_too_large');
      let verified: unknown;
      try {
        verified = webhooks.constructEvent(
          body,
          typeof signature === 'string' ? signature : '',
          deps.secret,
          TOLERANCE_S,
          undefined,
          x.services.clock.now(),
        );
      } catch {
        deps.metric('signature_failed');
        return fail(x, 'stripe_signature');
      }
      const read = eventEnvelope.safeParse(verified);
      if (!read.success) return fail(x, 'bad_request');
      const event = read.data;
      deps.metric('received');
      return deps.inbox({ id: event.id, type: event.type, body: body.toString('utf8') }).then(
        (fresh) => {
          if (!fresh) deps.metric('duplicate');
          answer(x, JSON.stringify({ received: true, duplicate: !fresh }));
        },
        // Not kept: a 503 makes Stripe send it again.
        (err: unknown) => void storeFailed(x, '', err, 'nothing'),
      );
    })
    .catch((err: unknown) => crashed(x, err));
}

function unread(x: Exchange, kind: 'stripe_event_too_large'): void {
  x.res.setHeader('Connection', 'close');
  fail(x, kind);
}

function answer(x: Exchange, body: string): void {
  send(
    x,
    200,
    ['Content-Type', 'application/json', 'Content-Length', Buffer.byteLength(body), 'Cache-Control', 'no-store'],
    body,
  );
}

function describe(config: Config): PostItem {
  return {
    post: {
      operationId: 'postStripeWebhook',
      tags: ['Billing'],
      summary: "Stripe's subscription events, mirrored into account plans",
      description:
        'Stripe events (checkout.session.completed, customer.subscription.created/updated/deleted, invoice.paid, invoice.payment_failed), signed with the endpoint secret (Stripe-Signature, 300 s tolerance). Each event id is kept once for 30 days; the event is stored before the 200 and applied from the store. Other types are answered 200 and ignored.',
      security: [],
      parameters: [
        {
          name: 'Stripe-Signature',
          in: 'header',
          required: true,
          description: "Stripe's signature of the raw body: t=TIMESTAMP,v1=HMAC-SHA256.",
          schema: { type: 'string' },
        },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
      responses: {
        200: {
          description: 'Stored (or a repeat of an event stored before: `duplicate: true`).',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { received: { type: 'boolean' }, duplicate: { type: 'boolean' } },
              },
            },
          },
        },
        ...errorResponses(config, ['stripe_signature', 'bad_request', 'stripe_event_too_large', 'unavailable']),
      },
    },
  };
}
