/**
 * The public page at `/` (page.ts) and its script, style and icon (assets.ts). With
 * `page.enabled` off, `/` is still described in the API document (as a 404) but not served.
 */
import type { Config } from '../../config/schema.js';
import { send, staticRoute } from '../../http/answer.js';
import { errorResponses, type OpenApiDocument } from '../../http/openapi.js';
import type { RouteDef } from '../../http/types.js';
import { priceAge } from '../../prices/staleness.js';
import { pageAssets } from './assets.js';
import { PublicPage } from './page.js';

/** `document`: the API document, whose docs the page shows. */
export function pageRoutes(config: Config, document: () => OpenApiDocument): RouteDef[] {
  const openapi = {
    get: {
      summary: 'The public page: current prices, a chart of the history, a usage check and these docs',
      description: 'Not metered; off when page.enabled is false (then 404).',
      responses: {
        200: { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } },
        ...errorResponses(config, ['not_found']),
      },
    },
  };
  if (!config.page.enabled) return [{ path: '/', route: null, openapi }];
  const page = new PublicPage(document, config.time_zone, config.prices.max_age_days);
  const assets = [...pageAssets()].map(([path, answer]): RouteDef => ({ path, route: staticRoute('assets', answer) }));
  return [
    {
      path: '/',
      route: {
        kind: 'handler',
        name: 'page',
        handle: (x) => {
          const stale = priceAge(x.g.book, config.prices.max_age_days, x.g.clock.now())?.stale ?? false;
          const { headers, body } = page.render(x.g.book.snapshot(), stale);
          send(x, 200, headers, body);
        },
      },
      openapi,
    },
    ...assets,
  ];
}
