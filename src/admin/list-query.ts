import { z } from 'zod';
import { accountRecord } from '../store/accounts/account-record.js';

/**
 * The cursor of an account listing: the last account id a page looked at, base64url-encoded so
 * callers treat it as opaque. A cursor that does not decode to an id (edited, truncated) is
 * refused; one that names an id of the right shape just continues after that id, which shows
 * nothing a listing from the start would not.
 */
const ID = /^[\w-]{1,128}$/;

export const encodeCursor = (id: string): string => Buffer.from(id, 'utf8').toString('base64url');

function decodeCursor(cursor: string): string | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return null;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  // Only the canonical encoding: another string decoding to the same id is not ours.
  return ID.test(id) && encodeCursor(id) === cursor ? id : null;
}

export const MAX_PAGE = 500;
const DEFAULT_PAGE = 50;

/**
 * `GET /admin/accounts` query and `accounts list` options, as strings (a query string or argv).
 * Strict: an unknown or repeated parameter is a 400 naming it, not silently ignored.
 */
export const listAccountsQuery = z
  .strictObject({
    status: accountRecord.shape.status.optional(),
    plan: z.string().min(1).max(100).optional(),
    label: z.string().min(1).max(200).optional(),
    limit: z
      .string()
      .regex(/^\d{1,4}$/, `expected a whole number from 1 to ${MAX_PAGE}`)
      .transform(Number)
      .pipe(
        z
          .number()
          .int()
          .min(1, `expected a whole number from 1 to ${MAX_PAGE}`)
          .max(MAX_PAGE, `expected a whole number from 1 to ${MAX_PAGE}`),
      )
      .optional(),
    cursor: z
      .string()
      .transform((c, ctx) => {
        const id = decodeCursor(c);
        if (id === null)
          ctx.addIssue({ code: 'custom', message: 'not a cursor this API gave (use next_cursor as it came)' });
        return id ?? '';
      })
      .optional(),
  })
  .transform(({ status, plan, label, limit, cursor }) => ({
    filter: { ...(status && { status }), ...(plan && { plan }), ...(label && { label }) },
    after: cursor ?? null,
    limit: limit ?? DEFAULT_PAGE,
  }));

export type ListAccountsQuery = z.infer<typeof listAccountsQuery>;

/** A query string as a record; a parameter given twice becomes an array, which the schema refuses. */
export function queryRecord(search: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(search.keys())) {
    const values = search.getAll(key);
    out[key] = values.length === 1 ? (values[0] as string) : values;
  }
  return out;
}
