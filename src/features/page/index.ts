/**
 * The public page at `/` (page.ts) and its script, style and icon (assets.ts). With
 * `page.enabled` off, `/` is still described in the API document (as a 404) but not served.
 */
import type { Logger } from 'pino';
import type { Config } from '../../config/config-schema.js';
import type { RouteDef } from '../../http/core-types.js';
import { conditional, errorResponses, type OpenApiDocument, PUBLIC } from '../../http/openapi.js';
import { sendWhole, wholeRoute } from '../../http/prebuilt.js';
import type { PriceBook } from '../../prices/book.js';
import { pageAssets } from './assets.js';
import { PublicPage } from './page.js';

/**
 * `document`: the API document, whose docs the page shows. `book`: the page of each snapshot is
 * built and compressed as it comes into effect (at start, on each price set), not on a request.
 */
export function pageRoutes(config: Config, document: () => OpenApiDocument, book: PriceBook, log: Logger): RouteDef[] {
  const openapi = conditional(
    {
      get: {
        operationId: 'getPage',
        tags: ['Documentation'],
        security: PUBLIC,
        summary: 'The public page: current prices, a chart of the history, a usage check and these docs',
        description: 'Not metered; off when page.enabled is false (then 404).',
        responses: {
          200: { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } },
          ...errorResponses(config, ['not_found']),
        },
      },
    },
    false,
    'It changes only with the price set or a restart.',
  );
  if (!config.page.enabled) return [{ path: '/', route: null, openapi }];
  const page = new PublicPage({ document, zone: config.time_zone, maxAgeDays: config.prices.max_age_days, log });
  // Off this call, since the page shows the document of routes still being gathered, and off any
  // request whose snapshot() found a set's time come.
  book.watch((snap, now) => setImmediate(() => page.prepare(snap, now)));
  const assets = [...pageAssets()].map(([path, answer]): RouteDef => ({ path, route: wholeRoute('assets', answer) }));
  return [
    {
      path: '/',
      route: {
        kind: 'handler',
        name: 'page',
        handle: (x) => {
          const { book, etags, clock } = x.services;
          const snap = book.snapshot();
          sendWhole(x, page.render(snap, etags.of(snap, clock.now())));
        },
      },
      openapi,
    },
    ...assets,
  ];
}
