/**
 * The usage check: usage.php, the account's position in its period without counting
 * (check.ts), and usage-history.php, its requests by day and its periods over a range (history.ts).
 */
import type { Config } from '../../config/config-schema.js';
import type { RouteDef } from '../../http/core-types.js';
import { errorResponses, jsonOk, KEY_ERRORS, query, ref } from '../../http/openapi.js';
import { MAX_RANGE_DAYS } from '../../time/days.js';
import { usageCheck } from './check.js';
import { usageHistory } from './usage-history.js';

const RANGE_TEXT = `, inclusive; at most ${MAX_RANGE_DAYS} days, within retention, each given once. Otherwise 400 Invalid date range.`;

export function usageRoutes(config: Config): RouteDef[] {
  const history = { zone: config.time_zone, retentionDays: config.usage.retention_days };
  return [
    {
      path: '/fuel-api/api/usage.php',
      scope: 'usage',
      route: { kind: 'handler', name: 'usage', handle: (x, target) => usageCheck(x, target.search) },
      openapi: {
        get: {
          operationId: 'getUsage',
          tags: ['Usage'],
          summary: 'Usage check, not counted',
          description:
            "The account's usage in its current period, without spending a request. Send the key in X-API-Key. Invalid keys count towards the invalid-key throttle.",
          security: [{ ApiKeyHeader: [] }, { ApiKeyQuery: [] }],
          responses: {
            200: jsonOk('The usage.', 'UsageAnswer'),
            ...errorResponses(config, KEY_ERRORS),
          },
        },
      },
    },
    {
      path: '/fuel-api/api/usage-history.php',
      scope: 'usage',
      route: { kind: 'handler', name: 'usage-history', handle: (x, target) => usageHistory(x, target.search, history) },
      openapi: {
        get: {
          operationId: 'getUsageHistory',
          tags: ['Usage'],
          summary: 'Usage history by day and period, not counted',
          description: `Requests counted each day (in the ${config.time_zone} zone, every day of the range, zeros included) and each period overlapping the range, with its usage. Days and periods are kept ${config.usage.retention_days} days after their period ends. Send the key in X-API-Key. Invalid keys count towards the invalid-key throttle.`,
          security: [{ ApiKeyHeader: [] }, { ApiKeyQuery: [] }],
          parameters: [
            {
              ...query('from', `First day, YYYY-MM-DD${RANGE_TEXT}`, ref('EffectiveDate'), '2026-11-01'),
              required: true,
            },
            { ...query('to', `Last day, YYYY-MM-DD${RANGE_TEXT}`, ref('EffectiveDate'), '2026-11-30'), required: true },
          ],
          responses: {
            200: jsonOk('The history.', 'UsageHistory'),
            ...errorResponses(config, ['invalid_range', ...KEY_ERRORS]),
          },
        },
      },
    },
  ];
}
