/**
 * FuelSA-compatible routes (`compat.fuelsa.enabled`): /exapi/fuel/current and
 * /exapi/fuel/byyear/{year}, in the shape FuelSA's clients parse (fuelsa-bodies.ts), so such a client
 * moves here by changing its base URL. They are metered routes like current.php: the same key
 * (also in FuelSA's `key` header), allowance, errors, ETag/304, rate headers and webhooks.
 */
import type { Config } from '../../config/config-schema.js';
import type { RouteDef } from '../../http/core-types.js';
import type { ErrorKind } from '../../http/error-kinds.js';
import { conditional, type GetItem, jsonOk, meteredPath } from '../../http/openapi.js';
import { BYYEAR_PREFIX, byYear, current } from './fuelsa-bodies.js';

const TAG = 'compat';
const KEY_HEADER = 'key';

const POLLING =
  'Not counted (unless metering.count_not_modified is set), answered even when the allowance is used up; the key is checked as on any request (401, 403, 429 for invalid-key throttling).';

const SHAPE =
  "FuelSA's shape, for its clients (naileddigital/fuelsa-*): location Reef (inland, Gauteng) or Coast (coastal); value in whole cents per litre (the served rand price × 100); date the effective date at midnight UTC; a null price has no item. No usage object: the allowance is in the rate headers.";

/** FuelSA's clients send the key in `key`; X-API-Key and api_key work as everywhere. */
function withKeyHeader(item: GetItem): GetItem {
  return { ...item, get: { ...item.get, security: [{ FuelsaKey: [] }, ...(item.get.security ?? [])] } };
}

export function compatFuelsaRoutes(config: Config): RouteDef[] {
  if (!config.compat.fuelsa.enabled) return [];
  const historyOff: ErrorKind[] = config.prices.historical_enabled ? [] : ['historical_disabled'];
  const path = (...args: Parameters<typeof meteredPath>): GetItem =>
    withKeyHeader(conditional(meteredPath(...args), true, POLLING));
  return [
    {
      path: '/exapi/fuel/current',
      scope: 'prices',
      route: { kind: 'metered', name: 'fuelsa-current', conditional: true, keyHeader: KEY_HEADER, prepare: current },
      openapi: path(
        config,
        { operationId: 'getFuelsaCurrentPrices', tags: [TAG] },
        'Current prices, FuelSA-compatible',
        `The set in effect now, as current.php serves it. ${SHAPE}`,
        jsonOk('The current prices.', 'FuelsaResult'),
        [],
        ['unavailable'],
      ),
    },
    {
      path: `${BYYEAR_PREFIX}*`,
      pattern: true,
      openapiPath: `${BYYEAR_PREFIX}{year}`,
      scope: 'history',
      route: {
        kind: 'metered',
        name: 'fuelsa-byyear',
        conditional: true,
        keyHeader: KEY_HEADER,
        prepare: historyOff.length > 0 ? () => 'historical_disabled' : byYear,
      },
      openapi: path(
        config,
        { operationId: 'getFuelsaPricesByYear', tags: [TAG] },
        'Prices of a year, FuelSA-compatible',
        `Every item of every set already in effect in the year, oldest first; empty lists for a year without sets. ${SHAPE}`,
        jsonOk('The sets of the year.', 'FuelsaResult'),
        [
          {
            name: 'year',
            in: 'path',
            required: true,
            description: 'Four digits, e.g. 2025. Otherwise 400 Invalid year.',
            // An integer, as historical.php's year: a typed client sends the same value to both.
            schema: { type: 'integer', minimum: 1000, maximum: 9999 },
            example: 2025,
          },
        ],
        ['invalid_year', 'not_found', ...historyOff],
      ),
    },
  ];
}
