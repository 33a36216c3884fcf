/** The account's keys and usage, through the admin API's own operations (deps.ts). */
import { z } from 'zod';
import { createKeyInput, patchKeyInput } from '../../keys/api-keys.js';
import { type ApiHandler, fields } from './acting.js';
import { GRACES_S } from './context.js';
import { answer, empty, failed, html, isForm, json } from './http.js';
import { secretPage } from './pages.js';

const rotateBody = z.strictObject({
  grace_s: z.coerce
    .number()
    .int()
    .refine((g) => (GRACES_S as readonly number[]).includes(g), `expected one of ${GRACES_S.join(', ')}`),
});
const DAYS = 90;

export const listKeys: ApiHandler = async (x, c, a) => json(x, 200, await c.deps.keys.list(a.accountId));

export const createKey: ApiHandler = async (x, c, a, _params, body) => {
  const input = createKeyInput.safeParse(fromForm(x.req.headers['content-type'], fields(body)));
  if (!input.success) return json(x, 400, { success: false, message: 'Bad request.', details: issues(input.error) });
  const created = await c.deps.keys.create(a.accountId, input.data, a.from).catch((err: unknown) => err);
  if (created instanceof Error) return failed(x, created);
  const made = created as Awaited<ReturnType<typeof c.deps.keys.create>>;
  if (isForm(x.req)) return html(x, 201, secretPage(made.key.name, made.api_key));
  json(x, 201, made);
};

export const rotateKey: ApiHandler = async (x, c, a, [keyId = ''], body) => {
  const input = rotateBody.safeParse(fields(body));
  if (!input.success) return json(x, 400, { success: false, message: 'Bad request.', details: issues(input.error) });
  const rotated = await c.deps.keys.rotate(a.accountId, keyId, input.data, a.from).catch((err: unknown) => err);
  if (rotated instanceof Error) return failed(x, rotated);
  const made = rotated as Awaited<ReturnType<typeof c.deps.keys.rotate>>;
  if (isForm(x.req)) return html(x, 201, secretPage(made.key.name, made.api_key));
  json(x, 201, made);
};

/** `PATCH`: the admin API's key patch, on a key of the session's account only (another's: 404). */
export const patchKey: ApiHandler = async (x, c, a, [keyId = ''], body) => {
  const input = patchKeyInput.safeParse(body);
  if (!input.success) return json(x, 400, { success: false, message: 'Bad request.', details: issues(input.error) });
  const updated = await c.deps.keys.update(a.accountId, keyId, input.data, a.from).catch((err: unknown) => err);
  if (updated instanceof Error) return failed(x, updated);
  json(x, 200, updated);
};

export const revokeKey: ApiHandler = async (x, c, a, [keyId = '']) => {
  const err = await c.deps.keys.revoke(a.accountId, keyId, a.from).then(
    () => null,
    (e: unknown) => e,
  );
  if (err !== null) return failed(x, err);
  if (isForm(x.req)) return empty(x, 303, ['Location', '/portal/']);
  empty(x, 204);
};

export const usage: ApiHandler = async (x, c, a) => json(x, 200, await c.deps.usage.usage(a.accountId, DAYS));

export const usageCsv: ApiHandler = async (x, c, a) =>
  answer(x, 200, 'text/csv; charset=utf-8', await c.deps.usage.csv(a.accountId, DAYS), [
    'Content-Disposition',
    'attachment; filename="usage.csv"',
  ]);

/** A form's fields as the JSON body would have them: scopes and allowed addresses as lists. */
function fromForm(type: string | undefined, body: Record<string, unknown>): Record<string, unknown> {
  if (!(type ?? '').startsWith('application/x-www-form-urlencoded')) return body;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (v === '') continue;
    out[k] =
      k === 'scopes' || k === 'allowed_cidrs'
        ? String(v)
            .split(/[\s,]+/)
            .filter(Boolean)
        : v;
  }
  return out;
}

const issues = (e: z.ZodError): string[] => e.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`);
