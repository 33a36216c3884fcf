/**
 * The OpenAPI 3.1 description of the public API, put together from the descriptions of the routes
 * it is given (as @fastify/swagger reads the registered routes' schemas), in their order, with the
 * component schemas of schemas.ts. Error messages are configurable, so the descriptions carry the
 * configured ones. Schemas are JSON Schema 2020-12; the tests validate real answers of every
 * endpoint against them, so the document cannot drift.
 */

import type { RouteDef } from '../../http/core-types.js';
import {
  type Json,
  KEY_EXPIRES,
  type OpenApiDocument,
  type Operation,
  type Response,
  UNEXPECTED,
} from '../../http/openapi.js';
import { PRICE_MEANING, schemas } from './schemas.js';

export function openApiDocument(routes: readonly RouteDef[]): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const { path, openapiPath, openapi, scope } of routes) {
    // A route switched off (route null) answers HEAD as it answers GET: 404.
    if (openapi && 'post' in openapi) paths[openapiPath ?? path] = { post: withDefault(openapi.post) };
    else if (openapi) {
      const get = withDefault({
        ...openapi.get,
        ...(scope && {
          description:
            `${openapi.get.description ?? ''} Key scope: ${scope} (a key limited to other scopes gets 403).`.trim(),
          'x-key-scope': scope,
          responses: withKeyExpiry(openapi.get.responses),
        }),
      });
      paths[openapiPath ?? path] = { get, head: headOf(get) };
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Fuel Price Gateway',
      version: '1.0.0',
      description: `South African fuel prices for fleet, logistics, ERP and analytics integrations. ${PRICE_MEANING} Every /fuel-api/api/ request (and /exapi/, the FuelSA-compatible routes, which also take the key in a header named key) needs an API key, in the api_key query parameter or the X-API-Key header, and a GET is counted against the account's allowance, except on usage.php and usage-history.php (HEAD and a 304 Not Modified are not counted either; each operation says). Any request may also be refused before it reaches an endpoint, with the same error body: 404 for an unknown path, 405 for a method the path does not answer (${methodsNote(paths)}), 400 for an unreadable request, 408 when its head arrives too slowly, 431 when its head is too large.`,
      license: { name: 'MIT', identifier: 'MIT' },
      contact: { name: 'Fuel Price Gateway operators' },
    },
    servers: [{ url: '/' }],
    // Only groups with an operation: the compat routes may be switched off.
    tags: TAGS.filter((tag) =>
      Object.values(paths).some((item) => ('get' in item ? item.get : item.post).tags.includes(tag.name)),
    ),
    paths,
    components: {
      schemas,
      securitySchemes: {
        ApiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        // FuelSA's clients send their key in `key` (the compat routes).
        FuelsaKey: { type: 'apiKey', in: 'header', name: 'key' },
      },
    },
  };
}

const TAGS = [
  { name: 'Prices', description: 'The current prices: metered, and free to poll with If-None-Match.' },
  { name: 'History', description: 'Prices and changes of the sets already in effect: metered.' },
  { name: 'Usage', description: "The account's position in its period: not counted." },
  { name: 'Documentation', description: 'This document and the page: public, no key.' },
  { name: 'Health', description: 'Liveness and readiness for balancers and orchestrators: public, no key.' },
  {
    name: 'Secret scanning',
    description: "Leak reports from GitHub's secret-scanning partner programme: signed by GitHub, no key.",
  },
  {
    name: 'compat',
    description:
      "Drop-in routes for FuelSA's clients: its paths and answer shape, the key in its `key` header (or X-API-Key, api_key); metered, conditional and webhooked like current.php.",
  },
];

const withDefault = (op: Operation): Operation => ({ ...op, responses: { ...op.responses, default: UNEXPECTED } });

/** Every answer of a route that takes a key may carry X-API-Key-Expires: each of its responses says so. */
function withKeyExpiry(responses: Operation['responses']): Operation['responses'] {
  return Object.fromEntries(
    Object.entries(responses).map(([status, r]) => [
      status,
      { ...r, headers: { ...((r['headers'] as Json | undefined) ?? {}), ...KEY_EXPIRES } },
    ]),
  );
}

/** The methods the paths answer, for the 405: GET and HEAD, and the POST-only paths this document has. */
function methodsNote(paths: OpenApiDocument['paths']): string {
  const posts = Object.keys(paths).filter((p) => 'post' in (paths[p] as object));
  return posts.length === 0 ? 'GET and HEAD' : `GET and HEAD; only POST on ${posts.join(', ')}`;
}

/** HEAD answers like GET without a body: the same operation, its answers without content. */
function headOf(get: Operation): Operation {
  const responses = Object.fromEntries(
    Object.entries(get.responses).map(([status, { content: _content, ...rest }]) => [status, rest as Response]),
  );
  return {
    ...get,
    operationId: get.operationId.replace(/^get/, 'head'),
    summary: `${get.summary} (headers only)`,
    responses,
  };
}
