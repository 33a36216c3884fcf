/**
 * History and changes: historical.php and changes.php, answered from the snapshot's prebuilt
 * entries (history.ts); with `prices.historical_enabled` off both answer 501.
 */
import type { Config } from '../../config/config-schema.js';
import type { RouteDef } from '../../http/core-types.js';
import type { ErrorKind } from '../../http/error-kinds.js';
import { meteredPath, query, RATE_HEADERS, ref } from '../../http/openapi.js';
import { changesCsv, historicalCsv } from './history-examples.js';
import { changes, historical, MAX_RANGE_MONTHS, MAX_YEAR, MIN_YEAR } from './price-history.js';

const RANGE_TEXT =
  `, inclusive; at most ${MAX_RANGE_MONTHS} months from from, or more to reach from the first set of the history ` +
  `to December of its last set's year. Otherwise 400 Invalid date range.`;
const FROM = query('from', `First month, YYYY-MM${RANGE_TEXT}`, ref('YearMonth'), '2025-01');
const TO = query('to', `Last month, YYYY-MM${RANGE_TEXT}`, ref('YearMonth'), '2025-12');

const REGION = query('region', 'Only this region in the results (default both).', { enum: ['coastal', 'inland'] });
const FORMAT = query(
  'format',
  'json (default) or csv. Without it, an Accept header that prefers text/csv to application/json gets csv: the 200 has each as its own media type.',
  { enum: ['json', 'csv'] },
);

export function historyRoutes(config: Config): RouteDef[] {
  const enabled = config.prices.historical_enabled;
  const off: ErrorKind[] = enabled ? [] : ['historical_disabled'];
  return [
    {
      path: '/fuel-api/api/historical.php',
      scope: 'history',
      route: {
        kind: 'metered',
        name: 'historical',
        prepare: enabled ? historical : () => 'historical_disabled',
        negotiates: true,
      },
      openapi: meteredPath(
        config,
        { operationId: 'getHistoricalPrices', tags: ['History'] },
        'Historical prices by month or range',
        'Every set already in effect in one month (month and year) or a range of months (from and to, not both forms).',
        {
          description: 'The sets, oldest first (an empty list when there are none).',
          headers: RATE_HEADERS,
          content: {
            'application/json': { schema: ref('Historical') },
            'text/csv': {
              schema: {
                type: 'string',
                description:
                  'format=csv (or Accept: text/csv): a header line, then one CRLF-terminated row per set and region.',
              },
              example: historicalCsv,
            },
          },
        },
        [
          query(
            'month',
            'Month, 1-12 (one or two digits); with year. A repeated month or year is refused (400).',
            { type: 'integer', minimum: 1, maximum: 12 },
            '9',
          ),
          query(
            'year',
            `Year, four digits, ${MIN_YEAR}-${MAX_YEAR}; with month. Otherwise 400 Invalid year.`,
            { type: 'integer', minimum: MIN_YEAR, maximum: MAX_YEAR },
            '2026',
          ),
          FROM,
          TO,
          REGION,
          FORMAT,
        ],
        ['invalid_month', 'invalid_year', 'invalid_range', 'invalid_region', 'invalid_format', ...off],
      ),
    },
    {
      path: '/fuel-api/api/changes.php',
      scope: 'history',
      route: {
        kind: 'metered',
        name: 'changes',
        prepare: enabled ? changes : () => 'historical_disabled',
        negotiates: true,
      },
      openapi: meteredPath(
        config,
        { operationId: 'getPriceChanges', tags: ['History'] },
        'Price changes in cents',
        'One entry per set effective in the range, oldest first, each with the change against the set before it.',
        {
          description: 'The changes, oldest first (an empty list when there are none).',
          headers: RATE_HEADERS,
          content: {
            'application/json': { schema: ref('Changes') },
            'text/csv': {
              schema: {
                type: 'string',
                description:
                  'format=csv (or Accept: text/csv): a header line, then one CRLF-terminated row per set and region; cents, an empty field for null; no usage.',
              },
              example: changesCsv,
            },
          },
        },
        [{ ...FROM, required: true }, { ...TO, required: true }, REGION, FORMAT],
        ['invalid_range', 'invalid_region', 'invalid_format', ...off],
      ),
    },
  ];
}
