import { z } from 'zod';

const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-](\d{2}):(\d{2}))$/;
// Anchors outside this range are mistakes, and far ones are costly: periods are counted from them.
const EARLIEST_ANCHOR = Date.UTC(2000, 0, 1);
const LATEST_ANCHOR = Date.UTC(2100, 0, 1);

/** True when every field is in range: Date.parse rolls 30 February over to March, and takes T24:00. */
function isRealInstant(s: string): boolean {
  const m = ISO_INSTANT.exec(s);
  if (!m) return false;
  const [y, mo, d, h, mi, sec = 0, oh = 0, om = 0] = m.slice(1).map((v) => (v === undefined ? undefined : Number(v)));
  if (y === undefined || mo === undefined || d === undefined || h === undefined || mi === undefined) return false;
  const day = new Date(Date.UTC(y, mo - 1, d));
  return mo >= 1 && mo <= 12 && day.getUTCDate() === d && h < 24 && mi < 60 && sec < 60 && oh <= 14 && om < 60;
}

/** An ISO 8601 time with offset, every field in range, from 2000 to 2099. */
export const isoInstant = z
  .string()
  .refine(isRealInstant, {
    message: 'expected an ISO 8601 time with offset, e.g. 2026-11-04T09:30:00+02:00',
    abort: true,
  })
  .refine(
    (s) => {
      const ms = Date.parse(s);
      return ms >= EARLIEST_ANCHOR && ms < LATEST_ANCHOR;
    },
    { message: 'expected a time from 2000-01-01 to 2099-12-31' },
  );
