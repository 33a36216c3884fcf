/**
 * The OpenAPI 3.1 description of the public API, built once per listener from the config (error
 * messages are configurable, historical data can be off). Schemas are JSON Schema 2020-12; the
 * tests validate real answers of every endpoint against them, so the document cannot drift.
 */
import type { Config } from '../../config/schema.js';
import { ERROR_STATUS, type ErrorKind } from '../../http/errors.js';
import { MAX_RANGE_MONTHS } from '../history/history.js';
import * as ex from './examples.js';
import { PRICE_MEANING, ref, schemas } from './schemas.js';

type Json = Record<string, unknown>;

/** The parts of the document the page's API docs read. */
export interface Operation {
  summary: string;
  description?: string;
  parameters?: Array<{
    name: string;
    in: string;
    description: string;
    example?: string;
    required?: boolean;
    [key: string]: unknown;
  }>;
  security?: Array<Record<string, string[]>>;
  responses: Record<string, Response>;
  [key: string]: unknown;
}
interface Response {
  description: string;
  [key: string]: unknown;
}
export interface OpenApiDocument {
  info: { title: string; description: string; [key: string]: unknown };
  paths: Record<string, { get: Operation }>;
  [key: string]: unknown;
}

const header = (description: string): Json => ({ description, schema: { type: 'integer' } });
const RATE_HEADERS: Json = {
  'X-RateLimit-Limit': header("The account's allowance for the period."),
  'X-RateLimit-Remaining': header('Requests left in the period.'),
  'X-RateLimit-Reset': header('Unix time (seconds) when the period ends.'),
};
const RETRY_AFTER: Json = { 'Retry-After': header('Seconds to wait before trying again.') };

const STATUS_TEXT: Record<number, string> = {
  400: 'A query parameter is missing or invalid; nothing was counted.',
  401: 'The key is missing or invalid; invalid keys count towards a per-address throttle.',
  403: 'The account is inactive.',
  404: 'No such path.',
  405: 'Only GET and HEAD are served.',
  429: 'The allowance is used up, or the address is throttled after too many invalid keys.',
  500: 'An unexpected failure.',
  501: 'Historical data is switched off on this gateway.',
  503: 'The store or the prices are unavailable for a moment.',
};

/** The error answers a route can give, grouped by status, with the configured messages as examples. */
function errorResponses(config: Config, kinds: ErrorKind[]): Record<string, Response> {
  const byStatus = new Map<number, ErrorKind[]>();
  for (const k of kinds) byStatus.set(ERROR_STATUS[k], [...(byStatus.get(ERROR_STATUS[k]) ?? []), k]);
  const out: Record<string, Response> = {};
  for (const [status, list] of byStatus) {
    const examples = Object.fromEntries(
      list.map((k) => [k, { value: { success: false, message: config.messages[k] } }]),
    );
    const headers = status === 429 ? { ...RETRY_AFTER, ...RATE_HEADERS } : status === 503 ? RETRY_AFTER : undefined;
    out[String(status)] = {
      description: STATUS_TEXT[status] ?? 'Error',
      ...(headers && { headers }),
      content: { 'application/json': { schema: ref('Error'), examples } },
    };
  }
  return out;
}

const KEY_ERRORS: ErrorKind[] = ['missing_key', 'invalid_key', 'inactive_key', 'throttled', 'unavailable'];
const COMMON: ErrorKind[] = ['method_not_allowed', 'internal'];
const METERED: ErrorKind[] = [...KEY_ERRORS, 'limit_monthly', 'limit_trial', ...COMMON];

const query = (
  name: string,
  description: string,
  schema: Json,
  example?: string,
): NonNullable<Operation['parameters']>[number] & Json => ({
  name,
  in: 'query',
  description,
  schema,
  ...(example && { example }),
});
const RANGE_TEXT = `, inclusive; at most ${MAX_RANGE_MONTHS} months from from. Otherwise 400 Invalid date range.`;
const FROM = query('from', `First month, YYYY-MM${RANGE_TEXT}`, ref('YearMonth'), '2025-01');
const TO = query('to', `Last month, YYYY-MM${RANGE_TEXT}`, ref('YearMonth'), '2025-12');

function jsonOk(description: string, schema: string, rated = true): Response {
  return {
    description,
    ...(rated && { headers: RATE_HEADERS }),
    content: { 'application/json': { schema: ref(schema) } },
  };
}

function metered(
  config: Config,
  summary: string,
  description: string,
  ok: Response,
  params: Operation['parameters'],
  extra: ErrorKind[],
): { get: Operation } {
  return {
    get: {
      summary,
      description: `${description} Counted against the allowance (HEAD: the same headers, not counted).`,
      security: [{ ApiKeyQuery: [] }, { ApiKeyHeader: [] }],
      parameters: params,
      responses: { 200: ok, ...errorResponses(config, [...extra, ...METERED]) },
    },
  };
}

export function openApiDocument(config: Config): OpenApiDocument {
  const history: ErrorKind[] = config.prices.historical_enabled ? [] : ['historical_disabled'];
  return {
    openapi: '3.1.0',
    info: {
      title: 'Fuel Price Gateway',
      version: '1.0.0',
      description: `South African fuel prices for fleet, logistics, ERP and analytics integrations. ${PRICE_MEANING} Every /fuel-api/api/ request needs an API key, in the api_key query parameter or the X-API-Key header, and is counted against the account's allowance (usage.php excepted). Any request may also be refused before it reaches an endpoint, with the same error body: 404 for an unknown path, 400 for an unreadable request, 408 when its head arrives too slowly, 431 when its head is too large.`,
    },
    servers: [{ url: '/' }],
    paths: {
      '/fuel-api/api/simple-current.php': metered(
        config,
        'Current prices, compact',
        'The set in effect now, for both regions.',
        jsonOk('The current prices.', 'SimpleCurrent'),
        [],
        ['unavailable'],
      ),
      '/fuel-api/api/current.php': metered(
        config,
        'Current prices, with source and update time',
        'The same prices as simple-current.php in the full envelope.',
        jsonOk('The current prices.', 'Current'),
        [],
        ['unavailable'],
      ),
      '/fuel-api/api/historical.php': metered(
        config,
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
                description: 'format=csv: a header line, then one CRLF-terminated row per set and region.',
              },
              example: ex.historicalCsv,
            },
          },
        },
        [
          query(
            'month',
            'Month, 1-12 (one or two digits); with year.',
            { type: 'string', pattern: '^(0?[1-9]|1[0-2])$' },
            '9',
          ),
          query('year', 'Year, four digits; with month.', { type: 'string', pattern: '^\\d{4}$' }, '2026'),
          FROM,
          TO,
          query('region', 'Only this region in the results (default both).', { enum: ['coastal', 'inland'] }),
          query('format', 'json (default) or csv.', { enum: ['json', 'csv'] }),
        ],
        ['invalid_month', 'invalid_year', 'invalid_range', 'invalid_region', 'invalid_format', ...history],
      ),
      '/fuel-api/api/changes.php': metered(
        config,
        'Price changes in cents',
        'One entry per set effective in the range, oldest first, each with the change against the set before it.',
        jsonOk('The changes.', 'Changes'),
        [
          { ...FROM, required: true },
          { ...TO, required: true },
        ],
        ['invalid_range', ...history],
      ),
      '/fuel-api/api/usage.php': {
        get: {
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
      '/fuel-api/openapi.json': {
        get: {
          summary: 'This document',
          responses: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': {} } } },
        },
      },
      '/': {
        get: {
          summary: 'The public page: current prices, a chart of the history, a usage check and these docs',
          description: 'Not metered; off when page.enabled is false (then 404).',
          responses: {
            200: { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } },
            ...errorResponses(config, ['not_found']),
          },
        },
      },
      '/healthz': {
        get: { summary: 'Liveness', responses: { 200: jsonOk('The process runs.', 'Health', false) } },
      },
      '/readyz': {
        get: {
          summary: 'Readiness',
          responses: {
            200: jsonOk('The store answers and a price set is in effect.', 'Ready', false),
            503: jsonOk('Not ready: see the fields.', 'Ready', false),
          },
        },
      },
    },
    components: {
      schemas,
      securitySchemes: {
        ApiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key' },
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
    },
  };
}
