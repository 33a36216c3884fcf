import { z } from 'zod';
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

const rawQuery = z.record(z.string(), z.union([z.string(), z.array(z.string())]));

/**
 * `GET /admin/usage[/periods]` query and `usage export|periods` options, as strings, to the days
 * of `zone`. A bad or repeated date, or any repeated parameter, is answered `invalidRange` (the
 * configurable "Invalid date range.", carried by its issues' `answer`), each field named in its
 * problems; an unknown parameter or a bad format names itself.
 */
export const exportInput = (zone: string, invalidRange: string): z.ZodType<ExportQuery, z.input<typeof rawQuery>> =>
  rawQuery.transform((query, ctx) => {
    const { from, to, ...rest } = query;
    const range = dayRange(from, to, zone);
    const repeated = Object.keys(rest).filter((k) => Array.isArray(rest[k]));
    if (range === null || repeated.length > 0) {
      const problems = [
        ...rangeProblems(from, to, zone),
        ...repeated.map((k): [string, string] => [k, 'given more than once']),
      ];
      for (const [field, message] of problems)
        ctx.addIssue({ code: 'custom', path: [field], message, params: { answer: invalidRange } });
      return z.NEVER;
    }
    const r = exportOptions.safeParse(rest);
    if (!r.success) {
      for (const issue of r.error.issues) ctx.addIssue({ ...issue, input: undefined });
      return z.NEVER;
    }
    return { range, account: r.data.account ?? null, format: r.data.format ?? 'csv' };
  });

/** What is wrong with `from`..`to`, field by field. */
function rangeProblems(from: unknown, to: unknown, zone: string): Array<[string, string]> {
  const day = (name: string, v: unknown): [string, string] | null =>
    typeof v !== 'string'
      ? [name, `expected one date YYYY-MM-DD${v === undefined ? '' : ', given once'}`]
      : dayStart(v, zone) === null
        ? [name, 'expected a real calendar date YYYY-MM-DD']
        : null;
  const bad = [day('from', from), day('to', to)].filter((p) => p !== null);
  if (bad.length > 0) return bad;
  const span = daysBetween(from as string, to as string) + 1;
  if (span < 1) return [['to', 'before from']];
  return span > MAX_RANGE_DAYS ? [['to', `more than ${MAX_RANGE_DAYS} days from from (both days count)`]] : [];
}
