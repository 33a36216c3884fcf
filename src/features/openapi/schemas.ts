/**
 * The schemas of the OpenAPI document (JSON Schema 2020-12), one per answer and its parts. The
 * descriptions say what the numbers mean, for integrators reading the document or the page.
 */
import { type Json, ref } from '../../http/openapi.js';
import { PRODUCTS } from '../../prices/price-set-schema.js';
import { compatSchemas } from './compat-schemas.js';
import { leakSchemas } from './leak-schemas.js';
import * as ex from './openapi-examples.js';

export const PRICE_MEANING =
  'Prices are Rand per litre (ZAR/l), as strings with exactly two decimals, in effect from 00:01 South African time ' +
  '(Africa/Johannesburg) on effective_date. petrol_93 and petrol_95 are the regulated pump (retail) prices; ' +
  'diesel_50ppm and diesel_500ppm are the wholesale list prices (diesel pump prices are not regulated). ' +
  'null means no official price was published for that product in that region.';

const productMap = (schema: Json): Json => Object.fromEntries(PRODUCTS.map((p) => [p, schema]));

export const schemas: Json = {
  Price: {
    type: ['string', 'null'],
    pattern: '^\\d{1,4}\\.\\d{2}$',
    description: 'Rand per litre with two decimals, e.g. "21.14"; null where no official price exists.',
  },
  RegionPrices: {
    type: 'object',
    description: PRICE_MEANING,
    required: ['zone', 'price_basis', ...PRODUCTS],
    additionalProperties: false,
    properties: {
      zone: { type: ['string', 'null'], description: 'null for the regional reference price.' },
      price_basis: {
        type: 'string',
        description: '"official_regional_reference": a regional price, not a station\'s.',
      },
      ...productMap(ref('Price')),
    },
  },
  Regions: {
    type: 'object',
    description: 'coastal: the Coastal column (Durban, Cape Town, Gqeberha …); inland: the Gauteng column.',
    required: ['coastal', 'inland'],
    additionalProperties: false,
    properties: { coastal: ref('RegionPrices'), inland: ref('RegionPrices') },
  },
  EffectiveDate: { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
  Usage: {
    type: 'object',
    description: "The account's position in its current period, this request included.",
    required: [
      'plan_type',
      'requests_used',
      'request_limit',
      'requests_remaining',
      'request_period',
      'period_started_at',
      'period_ends_at',
    ],
    additionalProperties: false,
    properties: {
      plan_type: { type: 'string', examples: ['developer', 'starter', 'business', 'enterprise'] },
      requests_used: { type: 'integer', minimum: 0 },
      request_limit: { type: 'integer', minimum: 1 },
      requests_remaining: { type: 'integer', minimum: 0, description: 'request_limit minus requests_used.' },
      request_period: { type: 'string', enum: ['trial', 'monthly'] },
      period_started_at: { type: 'string', format: 'date-time' },
      period_ends_at: { type: 'string', format: 'date-time', description: 'When the allowance starts afresh.' },
    },
  },
  SimpleCurrent: {
    type: 'object',
    required: ['success', 'effective_date', 'fuel_prices', 'usage'],
    additionalProperties: false,
    properties: {
      success: { const: true },
      effective_date: ref('EffectiveDate'),
      fuel_prices: ref('Regions'),
      usage: ref('Usage'),
    },
    examples: [ex.simpleCurrent],
  },
  Current: {
    type: 'object',
    required: ['success', 'source', 'effective_date', 'updated_at', 'data', 'usage'],
    additionalProperties: false,
    properties: {
      success: { const: true },
      source: { type: 'string', description: 'The publishing authority.' },
      effective_date: ref('EffectiveDate'),
      updated_at: {
        type: 'string',
        pattern: '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$',
        description: 'Local time (Africa/Johannesburg) of the latest update, YYYY-MM-DD HH:MM:SS.',
      },
      data: ref('Regions'),
      usage: ref('Usage'),
    },
    examples: [ex.current],
  },
  HistoricalEntry: {
    type: 'object',
    description: 'One price set; only the asked region when region is given.',
    required: ['effective_date'],
    minProperties: 2,
    additionalProperties: false,
    properties: { effective_date: ref('EffectiveDate'), coastal: ref('RegionPrices'), inland: ref('RegionPrices') },
  },
  Historical: {
    description: 'Every set effective in the month (month/year) or the range (from/to), oldest first.',
    oneOf: [
      {
        type: 'object',
        required: ['success', 'month', 'year', 'results'],
        additionalProperties: false,
        properties: {
          success: { const: true },
          month: { type: 'integer', minimum: 1, maximum: 12 },
          year: { type: 'integer' },
          results: { type: 'array', items: ref('HistoricalEntry') },
        },
      },
      {
        type: 'object',
        required: ['success', 'from', 'to', 'results'],
        additionalProperties: false,
        properties: {
          success: { const: true },
          from: ref('YearMonth'),
          to: ref('YearMonth'),
          results: { type: 'array', items: ref('HistoricalEntry') },
        },
      },
    ],
    examples: [ex.historicalMonth, ex.historicalRange],
  },
  YearMonth: { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])$' },
  CentsChange: {
    type: 'object',
    description:
      'Per product, the change in integer cents per litre against the previous set (-51: 51 cents cheaper); ' +
      'null where either set has no price for it, or there is no previous set.',
    required: [...PRODUCTS],
    additionalProperties: false,
    properties: productMap({ type: ['integer', 'null'] }),
  },
  Change: {
    type: 'object',
    description: 'One set with its change against the set before it; only the asked region when region is given.',
    required: ['effective_date', 'previous_effective_date'],
    minProperties: 3,
    additionalProperties: false,
    properties: {
      effective_date: ref('EffectiveDate'),
      previous_effective_date: {
        anyOf: [ref('EffectiveDate'), { type: 'null' }],
        description: 'The set before it in the whole history (it may lie before from); null for the first set.',
      },
      coastal: ref('CentsChange'),
      inland: ref('CentsChange'),
    },
  },
  Changes: {
    type: 'object',
    required: ['success', 'from', 'to', 'results', 'usage'],
    additionalProperties: false,
    properties: {
      success: { const: true },
      from: ref('YearMonth'),
      to: ref('YearMonth'),
      results: { type: 'array', items: ref('Change'), description: 'One entry per set effective in the range.' },
      usage: ref('Usage'),
    },
    examples: [ex.changes],
  },
  UsageAnswer: {
    type: 'object',
    required: ['success', 'usage', 'key'],
    additionalProperties: false,
    properties: {
      success: { const: true },
      usage: ref('Usage'),
      key: {
        type: 'object',
        description: 'The key that made the request.',
        required: ['id', 'name', 'expires_at'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', pattern: '^key_[0-9a-f]{16}$' },
          name: { type: 'string', minLength: 1, maxLength: 64 },
          expires_at: { type: ['string', 'null'], description: 'ISO 8601; null: never.' },
        },
      },
    },
    examples: [{ success: true, usage: ex.usage, key: ex.usageKey }],
  },
  UsageHistory: {
    type: 'object',
    required: ['success', 'from', 'to', 'days', 'periods'],
    additionalProperties: false,
    properties: {
      success: { const: true },
      from: ref('EffectiveDate'),
      to: ref('EffectiveDate'),
      days: {
        type: 'array',
        description: 'Every day of the range, oldest first, zeros included.',
        items: {
          type: 'object',
          required: ['date', 'requests'],
          additionalProperties: false,
          properties: { date: ref('EffectiveDate'), requests: { type: 'integer', minimum: 0 } },
        },
      },
      periods: {
        type: 'array',
        description: 'Each period overlapping the range, oldest first, the one in progress with its count so far.',
        items: ref('Usage'),
      },
    },
    examples: [
      {
        success: true,
        from: '2026-11-01',
        to: '2026-11-02',
        days: [
          { date: '2026-11-01', requests: 12 },
          { date: '2026-11-02', requests: 0 },
        ],
        periods: [ex.usage],
      },
    ],
  },
  Error: {
    type: 'object',
    required: ['success', 'message'],
    additionalProperties: false,
    properties: {
      success: { const: false },
      message: { type: 'string' },
      ref: {
        type: 'string',
        description: "On a 5xx answer: the request's id (also in `X-Request-Id`), to quote when reporting it.",
      },
    },
  },
  Health: {
    type: 'object',
    required: ['status'],
    additionalProperties: false,
    properties: { status: { const: 'ok' } },
  },
  Ready: {
    type: 'object',
    required: ['ready', 'store', 'prices'],
    properties: {
      ready: { type: 'boolean' },
      store: { type: 'boolean', description: 'Whether the store answers.' },
      prices: { type: 'boolean', description: 'Whether a price set is in effect.' },
      effective_date: ref('EffectiveDate'),
      age_days: { type: 'integer', description: 'Days since the served set took effect.' },
      stale: { type: 'boolean', description: 'Older than the configured maximum age (35 days by default).' },
      upstream: { type: 'object', description: 'In front of an origin: who polls it and how the last poll went.' },
    },
    examples: [ex.ready],
  },
  ...compatSchemas,
  ...leakSchemas,
};
