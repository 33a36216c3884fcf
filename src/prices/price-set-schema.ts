import { z } from 'zod';

export const PRODUCTS = ['petrol_93', 'petrol_95', 'diesel_50ppm', 'diesel_500ppm'] as const;
export const REGIONS = ['coastal', 'inland'] as const;

const price = z
  .string({ error: 'expected a price as a string with two decimals, e.g. "21.14", or null' })
  .regex(/^\d{1,4}\.\d{2}$/, 'expected a price as a string with two decimals, e.g. "21.14"')
  .nullable();

const region = z.strictObject({
  zone: z.string().nullable().default(null),
  price_basis: z.string().min(1).default('official_regional_reference'),
  petrol_93: price,
  petrol_95: price,
  diesel_50ppm: price,
  diesel_500ppm: price,
});

const isRealDate = (s: string): boolean => {
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(s);
};

export const effectiveDate = z
  .string({ error: 'expected a date YYYY-MM-DD' })
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date YYYY-MM-DD')
  .refine(isRealDate, 'expected a real calendar date');

const localDateTime = z
  .string({ error: 'expected a local time YYYY-MM-DD HH:MM:SS' })
  .regex(/^\d{4}-\d{2}-\d{2} ([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/, 'expected a local time YYYY-MM-DD HH:MM:SS')
  .refine((s) => isRealDate(s.slice(0, 10)), 'expected a real calendar date');

/** The price-set document: what `PUT /admin/prices`, `prices publish FILE` and the shipped data hold. */
export const priceSetDocument = z.strictObject({
  effective_date: effectiveDate,
  updated_at: localDateTime.optional(),
  source: z.string().min(1).max(200).optional(),
  // Research notes on where the numbers come from; kept with the history, never served.
  provenance: z.string().optional(),
  coastal: region,
  inland: region,
});

/** Sets of distinct dates: which of two sets of one date would win is nobody's decision. */
export const priceHistoryDocument = z.array(priceSetDocument).superRefine((sets, ctx) => {
  const dates = new Set<string>();
  for (const { effective_date: d } of sets) {
    if (dates.has(d)) ctx.addIssue({ code: 'custom', message: `effective_date ${d} appears twice` });
    dates.add(d);
  }
});

/** What `PUT /admin/prices` and `prices publish` take: one set, or a history of at least one. */
export const publishInput = z.union([
  priceSetDocument,
  priceHistoryDocument.check(z.minLength(1, 'expected at least one price set')),
]);

export type PriceSetDocument = z.infer<typeof priceSetDocument>;
export type PublishInput = z.infer<typeof publishInput>;
export type RegionPrices = z.infer<typeof region>;

/**
 * A stored price set: the document with `updated_at` filled in. Without `source`, the configured
 * authority is served. `origin: 'upstream'` marks a set obtained from the origin: in front of an
 * origin only such a set is served as current (the document schema refuses the field, so an
 * operator cannot forge it).
 */
export type PriceSet = PriceSetDocument & { updated_at: string; origin?: 'upstream' };

/** Whether two sets would be served alike (and came from the same kind of source). */
export function sameSet(a: PriceSet, b: PriceSet): boolean {
  const fields = (s: PriceSet): unknown[] => [
    s.effective_date,
    s.updated_at,
    s.source,
    s.origin,
    ...REGIONS.flatMap((r) => [s[r].zone, s[r].price_basis, ...PRODUCTS.map((p) => s[r][p])]),
  ];
  const x = fields(a);
  const y = fields(b);
  return x.every((v, i) => v === y[i]);
}

/** One line per problem, naming the field, e.g. `coastal.petrol_95: expected a price …`. */
export function describeIssues(error: z.ZodError, prefix = ''): string[] {
  return error.issues.map((i) => `${prefix}${i.path.join('.') || '(document)'}: ${i.message}`);
}
