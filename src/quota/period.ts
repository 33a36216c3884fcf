/**
 * Quota period arithmetic in an account's IANA time zone.
 *
 * Periods are defined by local wall-clock times, so each period start is turned back into an
 * instant with the DST rules of time/zone.ts: a start in a spring-forward gap moves forward by
 * the gap, an ambiguous one takes the earlier instant (quotas reset at the first occurrence).
 * Every period start is derived from the anchor, never from the previous period, so
 * neither a DST shift nor a month-end clamp (31 Jan → 28 Feb) carries over.
 */

import { DAY_MS, daysInMonth, formatInZone, localToInstant, wallAt } from '../time/zone.js';

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
  const startOf = (k: number): number => (k === 0 ? anchorMs : localToInstant({ ...a, d: a.d + k * days }, zone));
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
