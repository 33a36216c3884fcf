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

/** The error kinds a bad input is answered with: BAD_REQUEST, unless its entry names another. */
export type InvalidKind = 'BAD_REQUEST' | 'PRICE_SET_INVALID';

/**
 * Validates external input at the edge: a bad body is a 400 naming each field. Its message is
 * the problems, or the one an issue carries as `params.answer` (a configured message).
 */
export function parse<T extends z.ZodType>(schema: T, body: unknown, code: InvalidKind = 'BAD_REQUEST'): z.infer<T> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const lines = problemsOf(r.error);
  const answer = r.error.issues.map((i) => (i.code === 'custom' ? i.params?.answer : undefined)).find(Boolean);
  throw new GatewayError(code, typeof answer === 'string' ? answer : lines.join('; '), lines);
}

/**
 * One line per field; an unknown field or parameter is named on its own line, as the field. A
 * union's problems are those of its branch of the input's shape (an array's for an array).
 */
function problemsOf(error: z.ZodError): string[] {
  return error.issues.flatMap((i) => {
    if (i.code === 'unrecognized_keys')
      return i.keys.map((k) => `${[...i.path, k].join('.')}: unknown field or parameter`);
    if (i.code === 'invalid_union' && i.errors.length > 0) {
      const shaped = i.errors.find((e) => !e.some((b) => b.code === 'invalid_type' && b.path.length === 0));
      const branch = (shaped ?? i.errors[0] ?? []).map((b) => ({ ...b, path: [...i.path, ...b.path] }));
      return problemsOf(new z.ZodError(branch));
    }
    return describeIssues(new z.ZodError([i]));
  });
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
  if (lines.length > 0 || !r.success) throw new GatewayError('BAD_REQUEST', lines.join('; '), lines);
  return r.data;
}
