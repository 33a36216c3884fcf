/**
 * The OpenAPI 3.1 description of the public API, put together from the descriptions of the routes
 * it is given (as @fastify/swagger reads the registered routes' schemas), in their order, with the
 * component schemas of schemas.ts. Error messages are configurable, so the descriptions carry the
 * configured ones. Schemas are JSON Schema 2020-12; the tests validate real answers of every
 * endpoint against them, so the document cannot drift.
 */
import type { OpenApiDocument } from '../../http/openapi.js';
import type { RouteDef } from '../../http/types.js';
import { PRICE_MEANING, schemas } from './schemas.js';

export function openApiDocument(routes: readonly RouteDef[]): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const { path, openapi } of routes) if (openapi) paths[path] = openapi;
  return {
    openapi: '3.1.0',
    info: {
      title: 'Fuel Price Gateway',
      version: '1.0.0',
      description: `South African fuel prices for fleet, logistics, ERP and analytics integrations. ${PRICE_MEANING} Every /fuel-api/api/ request needs an API key, in the api_key query parameter or the X-API-Key header, and is counted against the account's allowance (usage.php excepted). Any request may also be refused before it reaches an endpoint, with the same error body: 404 for an unknown path, 400 for an unreadable request, 408 when its head arrives too slowly, 431 when its head is too large.`,
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        ApiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
    },
  };
}
