import type { PriceSet, RegionPrices } from '../../src/prices/price-set-schema.js';

/** A region's prices as stored: petrol 95 as given, the rest fixed unless `others` says otherwise. */
export const region = (petrol95: string, others: Partial<RegionPrices> = {}): RegionPrices => ({
  zone: null,
  price_basis: 'official_regional_reference',
  petrol_93: null,
  petrol_95: petrol95,
  diesel_50ppm: '20.00',
  diesel_500ppm: '19.50',
  ...others,
});

/** A set of `date` with the same prices in both regions (`region`'s). */
export const priceSet = (date: string, petrol95: string, others: Partial<RegionPrices> = {}): PriceSet => ({
  effective_date: date,
  updated_at: `${date} 00:00:00`,
  coastal: region(petrol95, others),
  inland: region(petrol95, others),
});
