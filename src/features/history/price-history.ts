/**
 * historical.php and changes.php: query validation, then an answer assembled from the
 * snapshot's prebuilt entries. An assembled answer is kept per snapshot and query, so a repeated
 * query allocates nothing and a new price set starts afresh.
 */
import { LRUCache } from 'lru-cache';
import type { MeteredBody } from '../../http/core-types.js';
import { compressible } from '../../http/encoding.js';
import type { ErrorKind } from '../../http/error-kinds.js';
import { CHANGES_CSV_HEADER } from '../../prices/changes.js';
import { CSV_HEADER, type HistoryEntry, type RegionChoice, type Snapshot } from '../../prices/snapshot.js';

const JSON_TYPE = 'application/json';
const CSV_TYPE = 'text/csv; charset=utf-8';
const MONTH = /^(0?[1-9]|1[0-2])$/;
const YEAR = /^\d{4}$/;
const YEAR_MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;
/** The years historical.php accepts (wider than the data, which starts in 2012, both ways). */
export const MIN_YEAR = 2000;
export const MAX_YEAR = 2100;
/**
 * The longest range one request may ask for, in months (ten years), unless the history is
 * longer: then a range may reach from its first set's month to December of its last set's year,
 * so that one request can hold the whole history (see `longestRange`).
 */
export const MAX_RANGE_MONTHS = 120;
// Distinct queries remembered per snapshot; beyond that the least recent is assembled again.
const CACHED_QUERIES = 512;

const bodies = new WeakMap<Snapshot, LRUCache<string, MeteredBody>>();

function cached(snap: Snapshot, key: string, build: () => MeteredBody): MeteredBody {
  let cache = bodies.get(snap);
  if (!cache) {
    cache = new LRUCache({ max: CACHED_QUERIES });
    bodies.set(snap, cache);
  }
  let p = cache.get(key);
  if (!p) {
    p = build();
    cache.set(key, p);
  }
  return p;
}

/**
 * A parameter's value, undefined when absent. A repeated one reads as '', which no parameter
 * accepts: a cache or proxy in front might read the other copy, so it is refused, not guessed.
 */
function single(query: URLSearchParams, name: string): string | undefined {
  const all = query.getAll(name);
  return all.length > 1 ? '' : all[0];
}

const monthNumber = (ym: string): number => Number(ym.slice(0, 4)) * 12 + Number(ym.slice(5, 7));

/**
 * The longest range allowed, in months: MAX_RANGE_MONTHS, or the months from the first set of
 * the history to December of its last set's year if that is more. The floor follows the data.
 */
export function longestRange(history: readonly HistoryEntry[]): number {
  const first = history[0];
  const last = history[history.length - 1];
  if (!first || !last) return MAX_RANGE_MONTHS;
  const span = Number(last.month.slice(0, 4)) * 12 + 12 - monthNumber(first.month) + 1;
  return Math.max(MAX_RANGE_MONTHS, span);
}

/** `from` and `to` as `YYYY-MM`, in order and at most `longestRange` apart (inclusive). */
function range(query: URLSearchParams, snap: Snapshot): { from: string; to: string } | 'invalid_range' {
  const from = single(query, 'from') ?? '';
  const to = single(query, 'to') ?? '';
  if (!YEAR_MONTH.test(from) || !YEAR_MONTH.test(to)) return 'invalid_range';
  const span = monthNumber(to) - monthNumber(from) + 1;
  return span < 1 || span > longestRange(snap.history) ? 'invalid_range' : { from, to };
}

const inRange = (history: readonly HistoryEntry[], from: string, to: string): HistoryEntry[] =>
  history.filter((e) => e.month >= from && e.month <= to);

const whole = (contentType: string, body: string): MeteredBody => ({
  contentType,
  head: body,
  tail: '',
  withUsage: false,
  bytes: Buffer.byteLength(body),
  compressed: compressible(body, false),
});

/**
 * The q-value `accept` gives a media type (RFC 9110 §12.5.1), 0 when it names it not; wildcards
 * are not read: they choose nothing.
 */
function quality(accept: string, type: string): number {
  for (const range of accept.split(',')) {
    const [name = '', ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    if (name !== type) continue;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined ? 1 : Number(q.slice(2)) || 0;
  }
  return 0;
}

/**
 * `format` json|csv, or without it the media type `accept` prefers (text/csv over
 * application/json; the document lists both for the 200, and a generated client asks for one),
 * json by default; `region` coastal|inland (default both); each at most once.
 */
function formatAndRegion(
  query: URLSearchParams,
  accept: string | undefined,
): { format: 'json' | 'csv'; choice: RegionChoice } | ErrorKind {
  const asked = accept !== undefined && quality(accept, 'text/csv') > quality(accept, 'application/json');
  const format = single(query, 'format') ?? (asked ? 'csv' : 'json');
  if (format !== 'json' && format !== 'csv') return 'invalid_format';
  const region = single(query, 'region');
  if (region !== undefined && region !== 'coastal' && region !== 'inland') return 'invalid_region';
  return { format, choice: region ?? 'both' };
}

/**
 * `month`+`year`, or `from`+`to` (not both); `region` coastal|inland (default both);
 * `format` json|csv (default json).
 */
export function historical(search: string, snap: Snapshot, _path?: string, accept?: string): MeteredBody | ErrorKind {
  const query = new URLSearchParams(search);
  const options = formatAndRegion(query, accept);
  if (typeof options === 'string') return options;
  const { format, choice } = options;
  let from: string;
  let to: string;
  let echo: string;
  if (query.has('from') || query.has('to')) {
    if (query.has('month') || query.has('year')) return 'invalid_range';
    const r = range(query, snap);
    if (r === 'invalid_range') return r;
    ({ from, to } = r);
    echo = `"from":"${from}","to":"${to}"`;
  } else {
    const month = single(query, 'month') ?? '';
    const year = single(query, 'year') ?? '';
    if (!MONTH.test(month)) return 'invalid_month';
    if (!YEAR.test(year) || Number(year) < MIN_YEAR || Number(year) > MAX_YEAR) return 'invalid_year';
    from = to = `${year}-${month.padStart(2, '0')}`;
    echo = `"month":${Number(month)},"year":${Number(year)}`;
  }
  return cached(snap, `h|${format}|${choice}|${echo}`, () => {
    const entries = inRange(snap.history, from, to);
    if (format === 'csv') return whole(CSV_TYPE, `${CSV_HEADER}\r\n${entries.map((e) => e.csv[choice]).join('')}`);
    return whole(JSON_TYPE, `{"success":true,${echo},"results":[${entries.map((e) => e.json[choice]).join(',')}]}`);
  });
}

/**
 * `from`+`to`: one entry per set effective in the range; `region` and `format` as historical.php.
 * JSON carries `usage`, spliced in per request; CSV, like historical.php's, does not.
 */
export function changes(search: string, snap: Snapshot, _path?: string, accept?: string): MeteredBody | ErrorKind {
  const query = new URLSearchParams(search);
  const options = formatAndRegion(query, accept);
  if (typeof options === 'string') return options;
  const { format, choice } = options;
  const r = range(query, snap);
  if (r === 'invalid_range') return r;
  return cached(snap, `c|${format}|${choice}|${r.from}|${r.to}`, () => {
    const entries = inRange(snap.history, r.from, r.to);
    if (format === 'csv')
      return whole(CSV_TYPE, `${CHANGES_CSV_HEADER}\r\n${entries.map((e) => e.changeCsv[choice]).join('')}`);
    const results = entries.map((e) => e.change[choice]);
    const head = `{"success":true,"from":"${r.from}","to":"${r.to}","results":[${results.join(',')}],"usage":`;
    return {
      contentType: JSON_TYPE,
      head,
      tail: '}',
      withUsage: true,
      bytes: Buffer.byteLength(head) + 1,
      compressed: compressible(head, true),
    };
  });
}
