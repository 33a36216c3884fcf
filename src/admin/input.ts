/** Admin input checked at the edge: every bad field of a body or query is one line of a 400's `problems`. */
import { z } from 'zod';
import type { Config } from '../config/config-schema.js';
import { GatewayError } from '../failures.js';
import { describeIssues, effectiveDate } from '../prices/price-set-schema.js';

export const cancelParams = z.strictObject({ date: effectiveDate });
// `DELETE /admin/cache` query and `cache purge` options: one path, or everything by saying so
// (a mistyped parameter used to read as "no path", which purged everything).
export const purgeInput = z
  .strictObject({
    path: z
      .string()
      .regex(/^\/[^\s?#]*$/, 'expected a path starting with "/" (a prefix when it ends in "*"), without a query')
      .max(2048)
      .optional(),
    all: z.literal('true', 'expected all=true (to purge every entry)').optional(),
  })
  .superRefine((q, ctx) => {
    if (q.path === undefined && q.all === undefined)
      ctx.addIssue({ code: 'custom', path: ['all'], message: 'expected all=true (every entry) or path=P (one path)' });
    if (q.path !== undefined && q.all !== undefined)
      ctx.addIssue({ code: 'custom', path: ['path'], message: 'expected path=P or all=true, not both' });
  });
export type PurgeInput = z.infer<typeof purgeInput>;

/** Validates external input at the edge: a bad body is a 400 naming each field. */
export function parse<T extends z.ZodType>(
  schema: T,
  body: unknown,
  code: 'BAD_REQUEST' | 'PRICE_SET_INVALID' = 'BAD_REQUEST',
): z.infer<T> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  fail(code, problemsOf(r.error));
}

function fail(code: 'BAD_REQUEST' | 'PRICE_SET_INVALID', lines: string[]): never {
  throw new GatewayError(code, lines.join('; '), lines);
}

/** One line per field; an unknown field or parameter is named on its own line, as the field. */
function problemsOf(error: z.ZodError): string[] {
  return error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => `${[...i.path, k].join('.')}: unknown field or parameter`)
      : describeIssues(new z.ZodError([i])),
  );
}

/**
 * An account body, with an unknown plan named beside any other problem: the schema cannot know
 * the configured plans, and would stop short of them at the first bad field.
 */
export function accountInput<T extends z.ZodType>(schema: T, body: unknown, plans: Config['plans']): z.infer<T> {
  const r = schema.safeParse(body);
  const plan = typeof body === 'object' && body !== null ? (body as { plan?: unknown }).plan : undefined;
  const unknownPlan =
    typeof plan === 'string' && plan !== '' && !Object.hasOwn(plans, plan)
      ? [`plan: unknown plan "${plan}" (known: ${Object.keys(plans).join(', ')})`]
      : [];
  const lines = [...unknownPlan, ...(r.success ? [] : problemsOf(r.error))];
  if (lines.length > 0 || !r.success) fail('BAD_REQUEST', lines);
  return r.data;
}
