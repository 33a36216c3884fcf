/**
 * Examples in the OpenAPI document: real answers of the gateway with the shipped prices, as they
 * were on 20 May 2025 at 09:30 (the 2025-05-07 set current; a developer trial opened then).
 * test/openapi/openapi.test.ts compares each with the answer a gateway at that time gives, and
 * validates it against its schema. Not the current prices: the document is no free price feed.
 */
const coastal = {
  zone: null,
  price_basis: 'official_regional_reference',
  petrol_93: null,
  petrol_95: '20.57',
  diesel_50ppm: null,
  diesel_500ppm: '18.07',
};
const inland = {
  zone: null,
  price_basis: 'official_regional_reference',
  petrol_93: '21.29',
  petrol_95: '21.40',
  diesel_50ppm: '18.94',
  diesel_500ppm: '18.90',
};

export const usage = {
  plan_type: 'developer',
  requests_used: 1,
  request_limit: 100,
  requests_remaining: 99,
  request_period: 'trial',
  period_started_at: '2025-05-20T09:30:00+02:00',
  period_ends_at: '2025-06-03T09:30:00+02:00',
};

export const simpleCurrent = { success: true, effective_date: '2025-05-07', fuel_prices: { coastal, inland }, usage };

export const current = {
  success: true,
  source: 'Department of Mineral and Petroleum Resources',
  effective_date: '2025-05-07',
  updated_at: '2025-05-07 00:01:00',
  data: { coastal, inland },
  usage,
};

export const historicalMonth = {
  success: true,
  month: 5,
  year: 2025,
  results: [{ effective_date: '2025-05-07', coastal, inland }],
};

export const historicalRange = {
  success: true,
  from: '2025-04',
  to: '2025-05',
  results: [
    {
      effective_date: '2025-04-02',
      inland: {
        zone: null,
        price_basis: 'official_regional_reference',
        petrol_93: '21.51',
        petrol_95: '21.62',
        diesel_50ppm: '19.35',
        diesel_500ppm: '19.32',
      },
    },
    { effective_date: '2025-05-07', inland },
  ],
};

export const changes = {
  success: true,
  from: '2025-04',
  to: '2025-05',
  results: [
    {
      effective_date: '2025-04-02',
      previous_effective_date: '2025-03-05',
      coastal: { petrol_93: null, petrol_95: -76, diesel_50ppm: null, diesel_500ppm: -88 },
      inland: { petrol_93: -58, petrol_95: -72, diesel_50ppm: -86, diesel_500ppm: -84 },
    },
    {
      effective_date: '2025-05-07',
      previous_effective_date: '2025-04-02',
      coastal: { petrol_93: null, petrol_95: -22, diesel_50ppm: null, diesel_500ppm: -42 },
      inland: { petrol_93: -22, petrol_95: -22, diesel_50ppm: -41, diesel_500ppm: -42 },
    },
  ],
  usage,
};

export const ready = {
  ready: true,
  store: true,
  prices: true,
  effective_date: '2025-05-07',
  age_days: 13,
  stale: false,
};

// The FuelSA-compatible current answer (features/compat-fuelsa): the same set in whole cents.
const at = { date: '2025-05-07T00:00:00.000Z' };
const petrol = (location: string, octane: string, value: number) => ({
  _id: `2025-05-07-${location.toLowerCase()}-petrol-${octane}`,
  ...at,
  location,
  octane,
  type: 'Unleaded',
  value,
});
const diesel = (location: string, ppm: string, value: number) => ({
  _id: `2025-05-07-${location.toLowerCase()}-diesel-${ppm}`,
  ...at,
  location,
  ppm,
  percentage: ppm === '50' ? '0.005' : '0.05',
  sulfates: ppm === '50' ? '0.005%' : '0.05%',
  value,
});
export const fuelsaCurrent = {
  petrol: [petrol('Coast', '95', 2057), petrol('Reef', '93', 2129), petrol('Reef', '95', 2140)],
  diesel: [diesel('Coast', '500', 1807), diesel('Reef', '50', 1894), diesel('Reef', '500', 1890)],
};

/** The key usage.php names (its id differs per key: the examples test compares the rest). */
export const usageKey = { id: 'key_3f9a1c07d2b84e65', name: 'default', expires_at: null };
