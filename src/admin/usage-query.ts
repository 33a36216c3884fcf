import { z } from 'zod';
import { GatewayError } from '../failures.js';
import { type DayRange, dayRange, dayStart, daysBetween, MAX_RANGE_DAYS } from '../time/days.js';

const exportOptions = z.strictObject({
  account: z
    .string()
    .regex(/^[\w-]{1,128}$/, 'expected an account id')
    .optional(),
  format: z.enum(['csv', 'json']).optional(),
});

export interface ExportQuery {
  range: DayRange;
  account: string | null;
  format: 'csv' | 'json';
}

/**
 * `GET /admin/usage[/periods]` query and `usage export|periods` options, as strings. A bad or
 * repeated date, or any repeated parameter, is `invalidRange` (the configurable "Invalid date
 * range."); an unknown parameter or a bad format names itself.
 */
export function exportQuery(query: Record<string, string | string[]>, zone: string, invalidRange: string): ExportQuery {
  const { from, to, ...rest } = query;
  const range = dayRange(from, to, zone);
  const repeated = Object.keys(rest).filter((k) => Array.isArray(rest[k]));
  if (range === null || repeated.length > 0)
    throw new GatewayError('BAD_REQUEST', invalidRange, [
      ...rangeProblems(from, to, zone),
      ...repeated.map((k) => `${k}: given more than once`),
    ]);
  const r = exportOptions.safeParse(rest);
  if (!r.success) {
    const lines = r.error.issues.flatMap((i) =>
      i.code === 'unrecognized_keys'
        ? i.keys.map((k) => `${k}: unknown parameter`)
        : [`${i.path.join('.') || '(query)'}: ${i.message}`],
    );
    throw new GatewayError('BAD_REQUEST', lines.join('; '), lines);
  }
  return { range, account: r.data.account ?? null, format: r.data.format ?? 'csv' };
}

/** What is wrong with `from`..`to`, field by field: the message stays the configured one. */
function rangeProblems(from: unknown, to: unknown, zone: string): string[] {
  const day = (name: string, v: unknown): string | null =>
    typeof v !== 'string'
      ? `${name}: expected one date YYYY-MM-DD${v === undefined ? '' : ', given once'}`
      : dayStart(v, zone) === null
        ? `${name}: expected a real calendar date YYYY-MM-DD`
        : null;
  const bad = [day('from', from), day('to', to)].filter((p) => p !== null);
  if (bad.length > 0) return bad;
  const span = daysBetween(from as string, to as string) + 1;
  if (span < 1) return ['to: before from'];
  return span > MAX_RANGE_DAYS ? [`to: more than ${MAX_RANGE_DAYS} days from from (both days count)`] : [];
}
