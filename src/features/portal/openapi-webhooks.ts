/** The webhooks part of `/portal/openapi.json` (openapi-doc.ts), built with that document's helpers. */
import { ACCOUNT_EVENT_TYPES } from '../../events/event.js';
import { SENDS_PER_MINUTE } from './send-limit.js';

type Schema = Record<string, unknown>;
interface DocParts {
  json: (schema: object) => Schema;
  ok: (description: string, schema?: object) => Schema;
  errors: Record<400 | 401 | 403 | 404, Schema>;
  csrf: Schema[];
  id: (name: string) => Schema;
  object: (properties: Record<string, object>, required?: string[]) => Schema;
  str: Schema;
}

export function webhooksDoc({ json, ok, errors, csrf, id, object, str }: DocParts) {
  const tooMany = ok(`More than ${SENDS_PER_MINUTE} test events and replays by the account in a minute (Retry-After)`);
  const webhook = { $ref: '#/components/schemas/Webhook' };
  return {
    schemas: {
      Webhook: object({
        id: str,
        url: str,
        events: { type: 'array', items: { enum: [...ACCOUNT_EVENT_TYPES] } },
        description: { type: ['string', 'null'] },
        created_at: str,
      }),
      Delivery: object({
        id: str,
        event_type: str,
        state: { enum: ['pending', 'delivered', 'failed'] },
        created_at: str,
        next_attempt: { type: ['string', 'null'] },
        attempts: {
          type: 'array',
          description: 'The latest 10 attempts, oldest first; body: the first 200 bytes of the answer',
          items: object({
            at: str,
            status: { type: ['integer', 'null'] },
            ms: { type: 'integer' },
            body: str,
            error: { type: ['string', 'null'] },
          }),
        },
      }),
    },
    paths: {
      '/webhooks': {
        get: {
          summary: "The account's own webhook endpoints (never a secret)",
          responses: {
            200: ok('Endpoints', object({ webhooks: { type: 'array', items: webhook } })),
            401: errors[401],
          },
        },
        post: {
          summary: "Add an endpoint for the account's own events; the signing secret is shown once",
          parameters: csrf,
          requestBody: {
            content: json(
              object(
                { url: str, events: { type: 'array', items: { enum: [...ACCOUNT_EVENT_TYPES] } }, description: str },
                ['url', 'events'],
              ),
            ),
          },
          responses: {
            201: ok('Added', object({ endpoint: webhook, secret: str })),
            409: ok('The account has 10 endpoints'),
            ...errors,
          },
        },
      },
      '/webhooks/{id}': {
        delete: {
          summary: 'Remove an endpoint and its deliveries',
          parameters: [...csrf, id('id')],
          responses: { 204: ok('Removed'), ...errors },
        },
      },
      '/webhooks/{id}/test': {
        post: {
          summary: 'Send a webhook.test event to this endpoint, delivered as any other',
          parameters: [...csrf, id('id')],
          responses: { 202: ok('Enqueued', object({ event_id: str })), ...errors, 429: tooMany },
        },
      },
      '/webhooks/{id}/deliveries': {
        get: {
          summary: "The endpoint's latest deliveries (100), newest first, each with its attempts",
          parameters: [id('id')],
          responses: {
            200: ok(
              'Deliveries',
              object({ deliveries: { type: 'array', items: { $ref: '#/components/schemas/Delivery' } } }),
            ),
            401: errors[401],
            404: errors[404],
          },
        },
      },
      '/webhooks/{id}/deliveries/{delivery_id}/replay': {
        post: {
          summary: 'Attempt one delivery again, now',
          parameters: [...csrf, id('id'), id('delivery_id')],
          responses: { 202: ok('Due now', object({ delivery_id: str })), ...errors, 429: tooMany },
        },
      },
    },
  };
}
