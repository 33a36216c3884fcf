/**
 * Current prices: simple-current.php and current.php, the set in effect now in its compact or
 * full envelope, with the request's `usage` spliced in by the metered pipeline.
 */
import type { Config } from '../../config/config-schema.js';
import type { MeteredBody, RouteDef } from '../../http/core-types.js';
import type { ErrorKind } from '../../http/error-kinds.js';
import { conditional, jsonOk, meteredPath } from '../../http/openapi.js';
import type { CurrentPrices } from '../../prices/snapshot.js';

const JSON_TYPE = 'application/json';

// One MeteredBody per price set and envelope, so a current-price request allocates none.
const simple = new WeakMap<CurrentPrices, MeteredBody>();
const full = new WeakMap<CurrentPrices, MeteredBody>();

function envelope(
  cache: WeakMap<CurrentPrices, MeteredBody>,
  current: CurrentPrices | null,
  head: (c: CurrentPrices) => string,
): MeteredBody | ErrorKind {
  if (current === null) return 'unavailable';
  let p = cache.get(current);
  if (!p) {
    const h = head(current);
    // Not compressed: under 1 KiB, and what gzip saves costs more CPU than the request itself
    // (docs/performance.md).
    p = {
      contentType: JSON_TYPE,
      head: h,
      tail: '}',
      withUsage: true,
      bytes: Buffer.byteLength(h) + 1,
      compressed: null,
    };
    cache.set(current, p);
  }
  return p;
}

const POLLING =
  'Not counted (unless metering.count_not_modified is set), answered even when the allowance is used up; the key is checked as on any request (401, 403, 429 for invalid-key throttling).';

const polled = (...args: Parameters<typeof meteredPath>) => conditional(meteredPath(...args), true, POLLING);

export function currentPricesRoutes(config: Config): RouteDef[] {
  return [
    {
      path: '/fuel-api/api/simple-current.php',
      scope: 'prices',
      route: {
        kind: 'metered',
        name: 'simple-current',
        conditional: true,
        prepare: (_q, s) => envelope(simple, s.current, (c) => c.simplePrefix),
      },
      openapi: polled(
        config,
        { operationId: 'getSimpleCurrentPrices', tags: ['Prices'] },
        'Current prices, compact',
        'The set in effect now, for both regions.',
        jsonOk('The current prices.', 'SimpleCurrent'),
        [],
        ['unavailable'],
      ),
    },
    {
      path: '/fuel-api/api/current.php',
      scope: 'prices',
      route: {
        kind: 'metered',
        name: 'current',
        conditional: true,
        prepare: (_q, s) => envelope(full, s.current, (c) => c.fullPrefix),
      },
      openapi: polled(
        config,
        { operationId: 'getCurrentPrices', tags: ['Prices'] },
        'Current prices, with source and update time',
        'The same prices as simple-current.php in the full envelope.',
        jsonOk('The current prices.', 'Current'),
        [],
        ['unavailable'],
      ),
    },
  ];
}
