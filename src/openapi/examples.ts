/**
 * Examples in the OpenAPI document: real answers of the gateway with the shipped prices (the
 * 2026-09-02 set), copied verbatim. test/openapi/openapi.test.ts validates each against its schema.
 */
const coastal = {
  zone: null,
  price_basis: 'official_regional_reference',
  petrol_93: null,
  petrol_95: '26.05',
  diesel_50ppm: '28.68',
  diesel_500ppm: '28.24',
};
const inland = {
  zone: null,
  price_basis: 'official_regional_reference',
  petrol_93: '26.76',
  petrol_95: '26.92',
  diesel_50ppm: '29.56',
  diesel_500ppm: '29.11',
};

export const usage = {
  plan_type: 'developer',
  requests_used: 1,
  request_limit: 100,
  requests_remaining: 99,
  request_period: 'trial',
  period_started_at: '2026-11-23T16:51:45+02:00',
  period_ends_at: '2026-12-07T16:51:45+02:00',
};

export const simpleCurrent = {
  success: true,
  effective_date: '2026-09-02',
  fuel_prices: { coastal, inland },
  usage,
};

export const current = {
  success: true,
  source: 'Department of Mineral and Petroleum Resources',
  effective_date: '2026-09-02',
  updated_at: '2026-09-02 00:01:00',
  data: { coastal, inland },
  usage,
};

export const historicalMonth = {
  success: true,
  month: 9,
  year: 2026,
  results: [{ effective_date: '2026-09-02', coastal, inland }],
};

export const historicalRange = {
  success: true,
  from: '2026-08',
  to: '2026-09',
  results: [{ effective_date: '2026-09-02', inland }],
};

export const historicalCsv =
  'effective_date,region,zone,price_basis,petrol_93,petrol_95,diesel_50ppm,diesel_500ppm\r\n' +
  '2026-09-02,inland,,official_regional_reference,26.76,26.92,29.56,29.11\r\n';

export const changes = {
  success: true,
  from: '2026-08',
  to: '2026-09',
  results: [
    {
      effective_date: '2026-08-05',
      previous_effective_date: '2026-07-01',
      coastal: { petrol_93: null, petrol_95: -52, diesel_50ppm: 123, diesel_500ppm: 138 },
      inland: { petrol_93: -52, petrol_95: -52, diesel_50ppm: 124, diesel_500ppm: 138 },
    },
    {
      effective_date: '2026-09-02',
      previous_effective_date: '2026-08-05',
      coastal: { petrol_93: null, petrol_95: 134, diesel_50ppm: 315, diesel_500ppm: 294 },
      inland: { petrol_93: 134, petrol_95: 134, diesel_50ppm: 315, diesel_500ppm: 294 },
    },
  ],
  usage,
};

export const ready = {
  ready: true,
  store: true,
  prices: true,
  effective_date: '2026-09-02',
  age_days: 82,
  stale: true,
};
