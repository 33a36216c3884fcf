import { z } from 'zod';
import { GatewayError } from '../errors.js';
import { type DayRange, dayRange } from '../time/days.js';

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
  if (range === null || Object.values(rest).some(Array.isArray)) throw new GatewayError('BAD_REQUEST', invalidRange);
  const r = exportOptions.safeParse(rest);
  if (!r.success) {
    const lines = r.error.issues.map((i) => `${i.path.join('.') || '(query)'}: ${i.message}`);
    throw new GatewayError('BAD_REQUEST', lines.join('; '), lines);
  }
  return { range, account: r.data.account ?? null, format: r.data.format ?? 'csv' };
}
