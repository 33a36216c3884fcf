import { createHash } from 'node:crypto';
import { changeCsv, changeJson } from './changes.js';
import { PRODUCTS, type PriceSet, type REGIONS, type RegionPrices } from './price-set-schema.js';

/**
 * Everything a price request needs, serialised once per price set. A request writes
 * `prefix + usage + '}'`; nothing in here is touched per request, and a new price set replaces
 * the whole object by reference, so no request can see half of a switch.
 */
export interface Snapshot {
  /** The set served as current; null while there is none (no set in effect, or an origin not yet polled). */
  readonly current: CurrentPrices | null;
  /** The sets already in effect, oldest first. */
  readonly history: readonly HistoryEntry[];
  /**
   * A digest of everything served from this snapshot (the current set with its source, and the
   * history), from the content alone: equal on every gateway serving the same prices, whatever
   * the process. The ETag of the current endpoints is made from it (http/etag.ts).
   */
  readonly tag: string;
}

export interface CurrentPrices {
  readonly set: PriceSet;
  readonly effectiveMs: number;
  /** `{"success":true,"effective_date":…,"fuel_prices":{…},"usage":` */
  readonly simplePrefix: string;
  /** `{"success":true,"source":…,"effective_date":…,"updated_at":…,"data":{…},"usage":` */
  readonly fullPrefix: string;
}

/** The three ways history can be asked for: both regions, or one. */
export type RegionChoice = 'both' | (typeof REGIONS)[number];

/** One set already in effect, serialised in every form an answer can take. */
export interface HistoryEntry {
  readonly set: PriceSet;
  /** `YYYY-MM` of its effective date. */
  readonly month: string;
  /** The `results` entry of historical.php, per region choice. */
  readonly json: Readonly<Record<RegionChoice, string>>;
  /** Its CSV rows, each ending in CRLF, per region choice. */
  readonly csv: Readonly<Record<RegionChoice, string>>;
  /** The `results` entry of changes.php, per region choice: against the set before it in the whole history. */
  readonly change: Readonly<Record<RegionChoice, string>>;
  /** Its changes.php CSV rows, each ending in CRLF, per region choice. */
  readonly changeCsv: Readonly<Record<RegionChoice, string>>;
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

function csvRows(s: PriceSet): [string, string] {
  const row = (region: (typeof REGIONS)[number]): string => {
    const r = s[region];
    return [s.effective_date, region, r.zone, r.price_basis, ...PRODUCTS.map((p) => r[p])].map(csvField).join(',');
  };
  return [row('coastal'), row('inland')];
}

const perRegion = (f: (regions: readonly (typeof REGIONS)[number][]) => string): Record<RegionChoice, string> => ({
  both: f(['coastal', 'inland']),
  coastal: f(['coastal']),
  inland: f(['inland']),
});

function historyEntries(inEffect: readonly PriceSet[]): HistoryEntry[] {
  return inEffect.map((set, i) => {
    const date = `"effective_date":${str(set.effective_date)}`;
    const [coastal, inland] = csvRows(set);
    return {
      set,
      month: set.effective_date.slice(0, 7),
      json: {
        both: `{${date},"coastal":${regionJson(set.coastal)},"inland":${regionJson(set.inland)}}`,
        coastal: `{${date},"coastal":${regionJson(set.coastal)}}`,
        inland: `{${date},"inland":${regionJson(set.inland)}}`,
      },
      csv: { both: `${coastal}\r\n${inland}\r\n`, coastal: `${coastal}\r\n`, inland: `${inland}\r\n` },
      change: perRegion((regions) => changeJson(inEffect[i - 1], set, regions)),
      changeCsv: perRegion((regions) => changeCsv(inEffect[i - 1], set, regions)),
    };
  });
}

export const EMPTY_SNAPSHOT: Snapshot = { current: null, history: [], tag: digest('') };

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

/** `inEffect` is the history already in effect, oldest first; `current` the set served as current, if any. */
export function buildSnapshot(
  inEffect: readonly PriceSet[],
  current: { set: PriceSet; effectiveMs: number } | null,
  defaultSource: string,
): Snapshot {
  const served = current && currentPrices(current.set, current.effectiveMs, defaultSource);
  const history = historyEntries(inEffect);
  const content = `${served?.fullPrefix ?? ''}\n${history.map((e) => e.json.both).join('\n')}`;
  return { current: served, history, tag: digest(content) };
}

function currentPrices(set: PriceSet, effectiveMs: number, defaultSource: string): CurrentPrices {
  const regions = regionsJson(set);
  return {
    set,
    effectiveMs,
    simplePrefix: flat(`{"success":true,"effective_date":${str(set.effective_date)},"fuel_prices":${regions},"usage":`),
    fullPrefix: flat(
      `{"success":true,"source":${str(set.source ?? defaultSource)},"effective_date":${str(set.effective_date)}` +
        `,"updated_at":${str(set.updated_at)},"data":${regions},"usage":`,
    ),
  };
}

/**
 * The text as one contiguous string. Built by concatenation, it is a tree of pieces that V8
 * walks again on every write of an answer that contains it (visible in a perf profile of a
 * metered request: docs/performance.md); copied once per price set, a write copies it in one go.
 */
function flat(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}
