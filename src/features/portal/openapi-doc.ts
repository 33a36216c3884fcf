/** `/portal/openapi.json`: the portal's own API, OpenAPI 3.1, apart from the public API's document. */

import { PASSKEY_PATHS } from './openapi-passkeys.js';
import { webhooksDoc } from './openapi-webhooks.js';

const json = (schema: object) => ({ 'application/json': { schema } });
const ok = (description: string, schema?: object) =>
  schema ? { description, content: json(schema) } : { description };
const errors = {
  400: ok('Bad request'),
  401: ok('Not signed in'),
  403: ok('Foreign Origin, missing CSRF token, or not an owner'),
  404: ok('No such key, member, webhook or delivery in this account'),
};
const csrf = [{ name: 'X-CSRF-Token', in: 'header', required: true, schema: { type: 'string' } }];
const id = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const key = { $ref: '#/components/schemas/Key' };
const object = (properties: Record<string, object>, required = Object.keys(properties)) => ({
  type: 'object',
  properties,
  required,
});
const str = { type: 'string' };
const hooks = webhooksDoc({ json, ok, errors, csrf, id, object, str });

export const PORTAL_OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'Fuel Price Gateway customer portal API',
    version: '1',
    description:
      'Called by the portal pages with the fpg_session cookie. Every state-changing request but sign-in sends X-CSRF-Token (the csrf_token of /portal/api/me) from the portal origin.',
  },
  servers: [{ url: '/portal/api' }],
  components: {
    securitySchemes: { session: { type: 'apiKey', in: 'cookie', name: 'fpg_session' } },
    schemas: {
      Key: object({
        id: str,
        name: str,
        hint: str,
        scopes: { type: 'array', items: str },
        allowed_cidrs: { type: 'array', items: str },
        created_at: str,
        last_used_on: { type: ['string', 'null'] },
        expires_at: { type: ['string', 'null'] },
        expired: { type: 'boolean' },
      }),
      Member: object({ account_id: str, email: str, role: { enum: ['owner', 'developer'] }, added_at: str }),
      ...hooks.schemas,
    },
  },
  security: [{ session: [] }],
  paths: {
    '/sign-in': {
      post: {
        security: [],
        summary: 'Email a sign-in link (202 for any address)',
        requestBody: { content: json(object({ email: str })) },
        responses: {
          202: ok('Accepted'),
          400: errors[400],
          403: errors[403],
          429: ok('Too many sign-in requests from this address'),
        },
      },
    },
    '/sign-out': {
      post: { summary: 'End this session', parameters: csrf, responses: { 204: ok('Signed out'), ...errors } },
    },
    '/sign-out-everywhere': {
      post: {
        summary: 'End every session of this person',
        parameters: csrf,
        responses: { 204: ok('Signed out'), ...errors },
      },
    },
    '/me': {
      get: {
        summary: 'Who is signed in, for which account',
        responses: {
          200: ok(
            'The session',
            object({
              email: str,
              csrf_token: str,
              account: object({ id: str, plan: str, role: str }),
              accounts: { type: 'array', items: object({ id: str, role: str }) },
            }),
          ),
          401: errors[401],
        },
      },
    },
    '/switch': {
      post: {
        summary: 'Act for another account of yours',
        parameters: csrf,
        requestBody: { content: json(object({ account_id: str })) },
        responses: { 200: ok('Switched'), ...errors },
      },
    },
    '/keys': {
      get: {
        summary: "The account's keys",
        responses: { 200: ok('Keys', object({ keys: { type: 'array', items: key } })), 401: errors[401] },
      },
      post: {
        summary: 'Create a key (its secret is in this answer only)',
        parameters: csrf,
        requestBody: {
          content: json(
            object(
              {
                name: str,
                scopes: { type: 'array', items: str },
                allowed_cidrs: { type: 'array', items: str },
                expires_at: str,
              },
              ['name'],
            ),
          ),
        },
        responses: { 201: ok('Created', object({ key, api_key: str })), ...errors },
      },
    },
    '/keys/{key_id}/rotate': {
      post: {
        summary: 'Roll a key; the old one works for grace_s more',
        parameters: [...csrf, id('key_id')],
        requestBody: { content: json(object({ grace_s: { enum: [0, 900, 3600, 86400, 604800] } })) },
        responses: { 201: ok('Rotated', object({ key, api_key: str, previous: key })), ...errors },
      },
    },
    '/keys/{key_id}': {
      patch: {
        summary: "Change a key's name, scopes, allowlist or expiry (the fields given)",
        parameters: [...csrf, id('key_id')],
        requestBody: {
          content: json({
            type: 'object',
            properties: {
              name: str,
              scopes: { type: 'array', items: str },
              allowed_cidrs: { type: 'array', items: str },
              expires_at: { type: ['string', 'null'] },
            },
            additionalProperties: false,
            minProperties: 1,
          }),
        },
        responses: { 200: ok('Changed', object({ key })), ...errors },
      },
      delete: {
        summary: 'Revoke a key (never the last)',
        parameters: [...csrf, id('key_id')],
        responses: { 204: ok('Revoked'), ...errors },
      },
    },
    '/usage': {
      get: {
        summary: 'The period in progress and requests per day, last 90 days',
        responses: {
          200: ok(
            'Usage',
            object({
              usage: { type: 'object' },
              days: { type: 'array', items: object({ day: str, requests: { type: 'integer' } }) },
            }),
          ),
          401: errors[401],
        },
      },
    },
    '/usage.csv': {
      get: {
        summary: 'The same days as CSV (formula-safe)',
        responses: { 200: { description: 'CSV', content: { 'text/csv': { schema: str } } }, 401: errors[401] },
      },
    },
    '/members': {
      get: {
        summary: "The account's members",
        responses: {
          200: ok('Members', object({ members: { type: 'array', items: { $ref: '#/components/schemas/Member' } } })),
          401: errors[401],
        },
      },
      post: {
        summary: 'Invite a member (owners only)',
        parameters: csrf,
        requestBody: { content: json(object({ email: str, role: { enum: ['owner', 'developer'] } }, ['email'])) },
        responses: {
          201: ok('Added', object({ member: { $ref: '#/components/schemas/Member' } })),
          409: ok('A member already'),
          ...errors,
        },
      },
    },
    '/members/{email}': {
      delete: {
        summary: 'Remove a member (owners only; never the last owner)',
        parameters: [...csrf, id('email')],
        responses: { 204: ok('Removed'), 409: ok('The last owner'), ...errors },
      },
    },
    ...hooks.paths,
    ...PASSKEY_PATHS,
  },
};
