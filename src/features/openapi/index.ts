/**
 * The OpenAPI document at /fuel-api/openapi.json, describing every route handed to the listener
 * (document.ts). It knows no other feature: it reads the descriptions the routes carry.
 */

import type { RouteDef } from '../../http/core-types.js';
import { conditional, type OpenApiDocument, PUBLIC } from '../../http/openapi.js';
import { fixedHeaders, sendWhole, Whole } from '../../http/prebuilt.js';
import { openApiDocument } from './document.js';

export interface OpenApi {
  routes: RouteDef[];
  /** The document, built at its first use (by then every route has been handed over), then kept. */
  document(): OpenApiDocument;
}

/**
 * `routes`: the list of every route the listener gets, this feature's among them, as the
 * composition root fills it. Read when the document is first asked for, as @fastify/swagger reads
 * the routes registered by then.
 */
export function openApi(routes: readonly RouteDef[]): OpenApi {
  let built: { doc: OpenApiDocument; json: Whole } | null = null;
  const build = (): { doc: OpenApiDocument; json: Whole } => {
    if (built === null) {
      const doc = openApiDocument(routes);
      built = {
        doc,
        json: new Whole({
          contentType: 'application/json',
          body: JSON.stringify(doc),
          fixed: fixedHeaders('public, max-age=300'),
        }),
      };
    }
    return built;
  };
  // The gateway's one ETag names the price set too (and whether it is stale), so the same bytes
  // get a header list per tag: the latest one is kept.
  let tagged: Whole | null = null;
  const own: RouteDef = {
    path: '/fuel-api/openapi.json',
    route: {
      kind: 'handler',
      name: 'openapi',
      handle: (x) => {
        const { etags, book, clock } = x.services;
        const etag = etags.of(book.snapshot(), clock.now());
        if (tagged?.etag !== etag) tagged = build().json.tagged(etag);
        sendWhole(x, tagged);
      },
    },
    openapi: conditional(
      {
        get: {
          operationId: 'getOpenApiDocument',
          tags: ['Documentation'],
          summary: 'This document',
          security: PUBLIC,
          responses: {
            200: { description: 'OpenAPI 3.1', content: { 'application/json': {} } },
          },
        },
      },
      false,
      'It changes only with the price set or a restart.',
    ),
  };
  return { routes: [own], document: () => build().doc };
}
