/**
 * Calendar days (YYYY-MM-DD) in an IANA zone: the ledger's buckets. A day starts at the zone's
 * local midnight (a midnight in a DST gap moves forward, as in zone.ts).
 */
import { DAY_MS, localToInstant, wallAt } from './zone.js';

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** The day of an instant in `zone`. */
export function dayOf(ms: number, zone: string): string {
  const w = wallAt(ms, zone);
  return `${pad(w.y, 4)}-${pad(w.mo + 1)}-${pad(w.d)}`;
}

/** The instant a day starts in `zone`; null for anything but a real YYYY-MM-DD date. */
export function dayStart(day: string, zone: string): number | null {
  const m = DAY.exec(day);
  if (m === null) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]) - 1, Number(m[3])];
  const utc = new Date(Date.UTC(y, mo, d));
  if (y < 1000 || utc.getUTCMonth() !== mo || utc.getUTCDate() !== d) return null;
  return localToInstant({ y, mo, d, h: 0, mi: 0, s: 0, ms: 0 }, zone);
}

/** The day `n` days after `day` (calendar arithmetic, no zone needed). */
export function addDays(day: string, n: number): string {
  const t = Date.parse(`${day}T00:00:00Z`) + n * DAY_MS;
  return new Date(t).toISOString().slice(0, 10);
}

/** Whole days from `a` to `b` (b − a). */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS);
}

/** The longest range an export or a usage history covers, in days (both ends included). */
export const MAX_RANGE_DAYS = 400;

export interface DayRange {
  from: string;
  to: string;
  /** Start of `from` in the zone. */
  fromMs: number;
  /** End of `to` (start of the day after) in the zone: the range is [fromMs, toMs). */
  toMs: number;
}

/**
 * A range of days `from`..`to` (YYYY-MM-DD, both included) in `zone`, or null when either is not
 * a real date, `from` is after `to`, or the range is longer than MAX_RANGE_DAYS.
 */
export function dayRange(from: unknown, to: unknown, zone: string): DayRange | null {
  if (typeof from !== 'string' || typeof to !== 'string') return null;
  const fromMs = dayStart(from, zone);
  const toStart = dayStart(to, zone);
  if (fromMs === null || toStart === null) return null;
  const span = daysBetween(from, to) + 1;
  if (span < 1 || span > MAX_RANGE_DAYS) return null;
  const toMs = dayStart(addDays(to, 1), zone) as number;
  return { from, to, fromMs, toMs };
}

/**
 * The current day for the request path: worked out with Intl once per day and then answered
 * by two comparisons, since every counted request needs it.
 */
export class DayClock {
  private from = 0;
  private until = 0;
  private name = '';

  constructor(private readonly zone: string) {}

  at(ms: number): string {
    if (ms >= this.from && ms < this.until) return this.name;
    const name = dayOf(ms, this.zone);
    const from = dayStart(name, this.zone) as number;
    this.until = dayStart(addDays(name, 1), this.zone) as number;
    this.from = from;
    this.name = name;
    return name;
  }
}
