/**
 * Quota period arithmetic in an account's IANA time zone.
 *
 * Periods are defined by local wall-clock times, so each period start has to be
 * turned back into an instant. Around DST transitions that is not one-to-one:
 *  - A wall time in a spring-forward gap (e.g. 01:30 on 2026-03-29 in Europe/London)
 *    never happens. We move it forward by the length of the gap (→ 02:30 BST), so the
 *    period starts at the first instant after the gap at the same distance from it.
 *  - An ambiguous wall time in a fall-back overlap (e.g. 01:30 on 2026-10-25 in London)
 *    happens twice. We use the earlier instant, so quotas reset at the first occurrence.
 * These are the same rules as Temporal's `disambiguation: 'compatible'` and java.time.
 * Every period start is derived from the anchor, never from the previous period, so
 * neither a DST shift nor a month-end clamp (31 Jan → 28 Feb) carries over.
 */

export type PeriodKind = 'trial' | 'monthly';

export interface Period {
  kind: PeriodKind;
  /** stable id of this period for the account, used in store counter keys: String(startMs) */
  id: string;
  /** inclusive */
  startMs: number;
  /** exclusive */
  endMs: number;
  /** ISO 8601 in the zone with its offset, second precision, e.g. 2026-11-04T09:30:00+02:00 */
  startedAt: string;
  /** same format, for endMs */
  endsAt: string;
}

/** Local calendar fields; month is 0-based and fields may overflow (Date.UTC normalises them). */
interface Wall {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
  ms: number;
}

const DAY_MS = 86_400_000;
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

function wallAt(ms: number, zone: string): Wall {
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
function localToInstant(w: Wall, zone: string): number {
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
  const w: Wall = { y: n(1), mo: n(2) - 1, d: n(3), h: n(4), mi: n(5), s: n(6), ms: Number((m[7] ?? '').padEnd(3, '0')) };
  if (w.mo < 0 || w.mo > 11 || w.d < 1 || w.d > daysInMonth(w.y, w.mo) || w.h > 23 || w.mi > 59 || w.s > 59) {
    throw new RangeError(`no such local time: '${local}'`);
  }
  return localToInstant(w, zone);
}

/** `mo` is 0-based and may overflow into later years. */
function daysInMonth(y: number, mo: number): number {
  return new Date(Date.UTC(y, mo + 1, 0)).getUTCDate();
}

function checkInstant(name: string, ms: number): void {
  if (!Number.isFinite(ms)) throw new RangeError(`${name} must be a finite epoch ms, got ${ms}`);
}

/** Period k is [startOf(k), startOf(k + 1)); `guess` only needs to be close, it is corrected here. */
function locate(
  kind: PeriodKind,
  anchorMs: number,
  nowMs: number,
  zone: string,
  guess: number,
  startOf: (k: number) => number,
): Period {
  let k = nowMs < anchorMs ? 0 : Math.max(0, guess);
  let start = startOf(k);
  while (start > nowMs && k > 0) start = startOf(--k);
  let end = startOf(k + 1);
  while (end <= nowMs) {
    start = end;
    end = startOf(++k + 1);
  }
  return {
    kind,
    id: String(start),
    startMs: start,
    endMs: end,
    startedAt: formatInZone(start, zone),
    endsAt: formatInZone(end, zone),
  };
}

/**
 * Trial periods: consecutive windows of `days` calendar days in `zone`, starting at anchor
 * (same local wall-clock time each window start; with DST a window can be 23/25h shorter/longer).
 * Returns the window containing nowMs, or the first window if nowMs < anchorMs.
 */
export function trialPeriod(anchorMs: number, nowMs: number, zone: string, days = 14): Period {
  checkInstant('anchorMs', anchorMs);
  checkInstant('nowMs', nowMs);
  if (!Number.isInteger(days) || days < 1) throw new RangeError(`days must be a positive integer, got ${days}`);
  const a = wallAt(anchorMs, zone);
  // k = 0 is the anchor itself, which may be the later instant of an ambiguous wall time.
  const startOf = (k: number): number =>
    k === 0 ? anchorMs : localToInstant({ ...a, d: a.d + k * days }, zone);
  const guess = Math.floor((nowMs - anchorMs) / (days * DAY_MS));
  return locate('trial', anchorMs, nowMs, zone, guess, startOf);
}

/**
 * Monthly billing cycle: starts at the anchor's local day-of-month and time of day each month in
 * `zone`; a month without that day uses its last day, without sticking (31 Jan → 28 Feb → 31 Mar).
 * Returns the cycle containing nowMs, or the first cycle (starting at the anchor) if nowMs < anchorMs.
 */
export function monthlyPeriod(anchorMs: number, nowMs: number, zone: string): Period {
  checkInstant('anchorMs', anchorMs);
  checkInstant('nowMs', nowMs);
  const a = wallAt(anchorMs, zone);
  const startOf = (k: number): number => {
    if (k === 0) return anchorMs;
    return localToInstant({ ...a, mo: a.mo + k, d: Math.min(a.d, daysInMonth(a.y, a.mo + k)) }, zone);
  };
  const now = new Date(nowMs);
  const guess = (now.getUTCFullYear() - a.y) * 12 + now.getUTCMonth() - a.mo;
  return locate('monthly', anchorMs, nowMs, zone, guess, startOf);
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
