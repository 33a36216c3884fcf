/**
 * The OpenAPI document at /fuel-api/openapi.json, describing every route handed to the listener
 * (document.ts). It knows no other feature: it reads the descriptions the routes carry.
 */
import { send } from '../../http/answer.js';
import { type StaticAnswer, staticAnswer } from '../../http/headers.js';
import type { OpenApiDocument } from '../../http/openapi.js';
import type { RouteDef } from '../../http/types.js';
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
  let built: { doc: OpenApiDocument; json: StaticAnswer } | null = null;
  const build = (): { doc: OpenApiDocument; json: StaticAnswer } => {
    if (built === null) {
      const doc = openApiDocument(routes);
      built = { doc, json: staticAnswer('application/json', JSON.stringify(doc), 'public, max-age=300') };
    }
    return built;
  };
  const own: RouteDef = {
    path: '/fuel-api/openapi.json',
    route: {
      kind: 'handler',
      name: 'openapi',
      handle: (x) => {
        const { json } = build();
        send(x, 200, json.headers, json.body);
      },
    },
    openapi: {
      get: {
        summary: 'This document',
        responses: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': {} } } },
      },
    },
  };
  return { routes: [own], document: () => build().doc };
}
