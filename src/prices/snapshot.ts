import { PRODUCTS, type PriceSet, REGIONS, type RegionPrices } from './schema.js';

/**
 * Everything a price request needs, serialised once per price set. A request writes
 * `prefix + usage + '}'`; nothing in here is touched per request, and a new price set replaces
 * the whole object by reference, so no request can see half of a switch.
 */
export interface Snapshot {
  /** The set served as current; null while there is none (no set in effect, or an origin not yet polled). */
  readonly current: CurrentPrices | null;
  /** Historical answers by `YYYY-MM`, for sets already in effect. */
  readonly months: ReadonlyMap<string, MonthAnswer>;
}

export interface CurrentPrices {
  readonly set: PriceSet;
  readonly effectiveMs: number;
  /** `{"success":true,"effective_date":…,"fuel_prices":{…},"usage":` */
  readonly simplePrefix: string;
  /** `{"success":true,"source":…,"effective_date":…,"updated_at":…,"data":{…},"usage":` */
  readonly fullPrefix: string;
}

export interface MonthAnswer {
  /** The `results` array, serialised. */
  json: string;
  csv: string;
}

const str = JSON.stringify;

// The spec's key order, written out rather than trusting the order of the parsed document.
function regionJson(r: RegionPrices): string {
  return (
    `{"zone":${str(r.zone)},"price_basis":${str(r.price_basis)}` +
    PRODUCTS.map((p) => `,"${p}":${str(r[p])}`).join('') +
    '}'
  );
}

const regionsJson = (s: PriceSet): string => `{"coastal":${regionJson(s.coastal)},"inland":${regionJson(s.inland)}}`;

export const CSV_HEADER = `effective_date,region,zone,price_basis,${PRODUCTS.join(',')}`;

const csvField = (v: string | null): string =>
  v === null ? '' : /[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;

function csvRows(s: PriceSet): string[] {
  return REGIONS.map((region) => {
    const r = s[region];
    return [s.effective_date, region, r.zone, r.price_basis, ...PRODUCTS.map((p) => r[p])].map(csvField).join(',');
  });
}

function monthIndex(history: readonly PriceSet[]): Map<string, MonthAnswer> {
  const byMonth = new Map<string, PriceSet[]>();
  for (const s of history) {
    const month = s.effective_date.slice(0, 7);
    byMonth.set(month, [...(byMonth.get(month) ?? []), s]);
  }
  const out = new Map<string, MonthAnswer>();
  for (const [month, sets] of byMonth) {
    const entries = sets.map(
      (s) =>
        `{"effective_date":${str(s.effective_date)},"coastal":${regionJson(s.coastal)},"inland":${regionJson(s.inland)}}`,
    );
    out.set(month, {
      json: `[${entries.join(',')}]`,
      csv: `${[CSV_HEADER, ...sets.flatMap(csvRows)].join('\r\n')}\r\n`,
    });
  }
  return out;
}

export const EMPTY_SNAPSHOT: Snapshot = { current: null, months: new Map() };

/** `inEffect` is the history already in effect, oldest first; `current` the set served as current, if any. */
export function buildSnapshot(
  inEffect: readonly PriceSet[],
  current: { set: PriceSet; effectiveMs: number } | null,
  defaultSource: string,
): Snapshot {
  return {
    current: current && currentPrices(current.set, current.effectiveMs, defaultSource),
    months: monthIndex(inEffect),
  };
}

function currentPrices(set: PriceSet, effectiveMs: number, defaultSource: string): CurrentPrices {
  const regions = regionsJson(set);
  return {
    set,
    effectiveMs,
    simplePrefix: `{"success":true,"effective_date":${str(set.effective_date)},"fuel_prices":${regions},"usage":`,
    fullPrefix:
      `{"success":true,"source":${str(set.source ?? defaultSource)},"effective_date":${str(set.effective_date)}` +
      `,"updated_at":${str(set.updated_at)},"data":${regions},"usage":`,
  };
}
