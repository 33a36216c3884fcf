import { PRODUCTS, type PriceSet, REGIONS } from './price-set-schema.js';

/**
 * A served price as integer cents, read from its decimal string ("21.37" → 2137) so that no
 * float ever enters a difference. The schema guarantees exactly two decimals.
 */
export const cents = (price: string): number => Number(price.replace('.', ''));

const delta = (before: string | null, after: string | null): number | null =>
  before === null || after === null ? null : cents(after) - cents(before);

type Region = (typeof REGIONS)[number];

/** Per product, the change of `set` against `previous` in cents; null where either side has no price. */
export const regionDeltas = (previous: PriceSet | undefined, set: PriceSet, r: Region): Array<number | null> =>
  PRODUCTS.map((p) => delta(previous?.[r][p] ?? null, set[r][p]));

/**
 * The changes.php entry of `set` for the regions asked (both, or one): per region and product
 * the change in cents against `previous` (the set before it in the whole history), null where
 * either side has no price or there is no previous set.
 */
export function changeJson(
  previous: PriceSet | undefined,
  set: PriceSet,
  regions: readonly Region[] = REGIONS,
): string {
  const region = (r: Region): string => {
    const d = regionDeltas(previous, set, r);
    return `{${PRODUCTS.map((p, i) => `"${p}":${d[i]}`).join(',')}}`;
  };
  return (
    `{"effective_date":${JSON.stringify(set.effective_date)},` +
    `"previous_effective_date":${JSON.stringify(previous?.effective_date ?? null)},` +
    regions.map((r) => `"${r}":${region(r)}`).join(',') +
    '}'
  );
}

export const CHANGES_CSV_HEADER = `effective_date,previous_effective_date,region,${PRODUCTS.join(',')}`;

/** The CSV rows of `set`'s change, one per region asked, each ending in CRLF; null is an empty field. */
export function changeCsv(previous: PriceSet | undefined, set: PriceSet, regions: readonly Region[] = REGIONS): string {
  return regions
    .map(
      (r) =>
        `${[set.effective_date, previous?.effective_date ?? '', r, ...regionDeltas(previous, set, r).map((d) => (d === null ? '' : String(d)))].join(',')}\r\n`,
    )
    .join('');
}
