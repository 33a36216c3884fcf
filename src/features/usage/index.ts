/** The usage check: usage.php, the account's position in its period without counting (check.ts). */
import type { Config } from '../../config/schema.js';
import { COMMON, errorResponses, jsonOk, KEY_ERRORS } from '../../http/openapi.js';
import type { RouteDef } from '../../http/types.js';
import { usageCheck } from './check.js';

export function usageRoutes(config: Config): RouteDef[] {
  return [
    {
      path: '/fuel-api/api/usage.php',
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
            ...errorResponses(config, [...KEY_ERRORS, ...COMMON]),
          },
        },
      },
    },
  ];
}
