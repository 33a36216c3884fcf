/**
 * Wall-clock arithmetic in an IANA time zone, with DST handled the way Temporal's
 * `disambiguation: 'compatible'` and java.time do:
 *  - a wall time in a spring-forward gap (01:30 on 2026-03-29 in Europe/London) never happens:
 *    it moves forward by the length of the gap (→ 02:30 BST);
 *  - an ambiguous wall time in a fall-back overlap happens twice: the earlier instant is used.
 * Shared by periods (quota/), effective times (prices/) and timestamps (admin/).
 */

/** Local calendar fields; month is 0-based and fields may overflow (Date.UTC normalises them). */
export interface Wall {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
  ms: number;
}

export const DAY_MS = 86_400_000;
// Intl matches zone names case-insensitively, so callers could mint unbounded distinct keys;
// real zone sets are small, so a crude cap is enough.
const MAX_CACHED_ZONES = 512;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (f === undefined) {
    // Throws RangeError for unknown zones, so only valid zones get cached.
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    if (formatters.size >= MAX_CACHED_ZONES) formatters.clear();
    formatters.set(zone, f);
  }
  return f;
}

const HOUR_MS = 3_600_000;
const MAX_CACHED_HOURS = 8192;
/** Per zone, the UTC offset of each hour (since the epoch) that has one offset throughout; NaN: it has two. */
const hourOffsets = new Map<string, Map<number, number>>();

/**
 * The local wall time of an instant. Intl's `formatToParts` costs several µs, and loading an
 * account works out its period with about ten of them (docs/performance.md), so the offset of
 * each hour is asked of Intl once (at its first and last ms: an hour with a transition in it is
 * asked every time) and the wall time is the UTC fields of the instant plus that offset.
 */
export function wallAt(ms: number, zone: string): Wall {
  const hour = Math.floor(ms / HOUR_MS);
  let hours = hourOffsets.get(zone);
  let offset = hours?.get(hour);
  if (offset === undefined) {
    const start = hour * HOUR_MS;
    const first = intlOffset(start, zone);
    offset = first === intlOffset(start + HOUR_MS - 1, zone) ? first : Number.NaN;
    if (hours === undefined) {
      if (hourOffsets.size >= MAX_CACHED_ZONES) hourOffsets.clear();
      hours = new Map();
      hourOffsets.set(zone, hours);
    }
    if (hours.size >= MAX_CACHED_HOURS) hours.clear();
    hours.set(hour, offset);
  }
  if (Number.isNaN(offset)) return intlWallAt(ms, zone);
  const d = new Date(ms + offset);
  return {
    y: d.getUTCFullYear(),
    mo: d.getUTCMonth(),
    d: d.getUTCDate(),
    h: d.getUTCHours(),
    mi: d.getUTCMinutes(),
    s: d.getUTCSeconds(),
    ms: d.getUTCMilliseconds(),
  };
}

function intlOffset(ms: number, zone: string): number {
  return wallAsUtc(intlWallAt(ms, zone)) - ms;
}

function intlWallAt(ms: number, zone: string): Wall {
  const w: Wall = { y: 0, mo: 0, d: 0, h: 0, mi: 0, s: 0, ms: ((ms % 1000) + 1000) % 1000 };
  for (const { type, value } of formatter(zone).formatToParts(ms)) {
    if (type === 'year') w.y = Number(value);
    else if (type === 'month') w.mo = Number(value) - 1;
    else if (type === 'day') w.d = Number(value);
    else if (type === 'hour') w.h = Number(value);
    else if (type === 'minute') w.mi = Number(value);
    else if (type === 'second') w.s = Number(value);
  }
  return w;
}

/** Wall time read as if it were UTC. Years 0–99 are not supported (Date.UTC maps them to 19xx). */
function wallAsUtc(w: Wall): number {
  return Date.UTC(w.y, w.mo, w.d, w.h, w.mi, w.s, w.ms);
}

/** Offset of `zone` from UTC at instant `ms`, in ms (local = utc + offset). */
function offsetAt(ms: number, zone: string): number {
  return wallAsUtc(wallAt(ms, zone)) - ms;
}

/** Instant of a local wall time; gaps shift forward, overlaps take the earlier instant (see top). */
export function localToInstant(w: Wall, zone: string): number {
  const local = wallAsUtc(w);
  // Offsets a day either side bracket any transition near this wall time (offsets are < ±1 day).
  const before = offsetAt(local - DAY_MS, zone);
  const after = offsetAt(local + DAY_MS, zone);
  if (before === after) return local - before;
  const big = Math.max(before, after);
  // The larger offset gives the earlier instant: right for overlaps and for wall times past a gap.
  // Otherwise the wall time is before the transition, or inside a gap, where `local - small`
  // is exactly the gap-shifted instant.
  const early = local - big;
  return offsetAt(early, zone) === big ? early : local - Math.min(before, after);
}

const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/;

/**
 * Instant of a local wall time 'YYYY-MM-DDTHH:mm[:ss[.sss]]' (no offset) in `zone`, with the
 * DST rules above. Throws RangeError for malformed or impossible dates such as 2026-02-30.
 */
export function localTimeToMs(local: string, zone: string): number {
  const m = LOCAL_TIME.exec(local);
  if (m === null) throw new RangeError(`expected a local time YYYY-MM-DDTHH:mm[:ss[.sss]], got '${local}'`);
  const n = (i: number): number => Number(m[i] ?? 0);
  const w: Wall = {
    y: n(1),
    mo: n(2) - 1,
    d: n(3),
    h: n(4),
    mi: n(5),
    s: n(6),
    ms: Number((m[7] ?? '').padEnd(3, '0')),
  };
  if (w.mo < 0 || w.mo > 11 || w.d < 1 || w.d > daysInMonth(w.y, w.mo) || w.h > 23 || w.mi > 59 || w.s > 59) {
    throw new RangeError(`no such local time: '${local}'`);
  }
  return localToInstant(w, zone);
}

/** `mo` is 0-based and may overflow into later years. */
export function daysInMonth(y: number, mo: number): number {
  return new Date(Date.UTC(y, mo + 1, 0)).getUTCDate();
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** ISO 8601 local time in zone with offset, second precision, e.g. '2026-11-04T09:30:00+02:00'. */
export function formatInZone(ms: number, zone: string): string {
  const w = wallAt(ms, zone);
  const offset = Math.round((wallAsUtc(w) - ms) / 1000);
  const abs = Math.abs(offset);
  // Historic local-mean-time offsets can have seconds; only then is a seconds field written.
  const secs = abs % 60 === 0 ? '' : `:${pad(abs % 60)}`;
  return (
    `${pad(w.y, 4)}-${pad(w.mo + 1)}-${pad(w.d)}T${pad(w.h)}:${pad(w.mi)}:${pad(w.s)}` +
    `${offset < 0 ? '-' : '+'}${pad(Math.floor(abs / 3600))}:${pad(Math.floor(abs / 60) % 60)}${secs}`
  );
}

/** true when `zone` is an IANA zone Intl accepts */
export function isValidTimeZone(zone: string): boolean {
  // Newer engines also accept bare offsets such as '+02:00'; those are not IANA zones.
  if (typeof zone !== 'string' || zone === '' || /^[+-]/.test(zone)) return false;
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}
