import { PRODUCTS, type PriceSet, REGIONS } from './schema.js';

/**
 * A served price as integer cents, read from its decimal string ("21.37" → 2137) so that no
 * float ever enters a difference. The schema guarantees exactly two decimals.
 */
export const cents = (price: string): number => Number(price.replace('.', ''));

const delta = (before: string | null, after: string | null): number | null =>
  before === null || after === null ? null : cents(after) - cents(before);

/**
 * The changes.php entry of `set`: per region and product the change in cents against `previous`
 * (the set before it in the whole history), null where either side has no price or there is no
 * previous set.
 */
export function changeJson(previous: PriceSet | undefined, set: PriceSet): string {
  const region = (r: (typeof REGIONS)[number]): string =>
    `{${PRODUCTS.map((p) => `"${p}":${delta(previous?.[r][p] ?? null, set[r][p])}`).join(',')}}`;
  return (
    `{"effective_date":${JSON.stringify(set.effective_date)},` +
    `"previous_effective_date":${JSON.stringify(previous?.effective_date ?? null)},` +
    REGIONS.map((r) => `"${r}":${region(r)}`).join(',') +
    '}'
  );
}
