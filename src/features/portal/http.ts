/** How the portal answers: its security headers, JSON and HTML bodies, bodies read, failures mapped. */
import type { IncomingMessage } from 'node:http';
import { FAILURE_STATUS, isGatewayError } from '../../failures.js';
import type { Exchange } from '../../http/core-types.js';
import type { ErrorKind } from '../../http/error-kinds.js';
import { crashed, readBody as readRequestBody, send } from '../../http/metered/pipeline.js';

/**
 * Every portal answer: never cached, never framed, nothing run or loaded but our own script and
 * style (no inline script), never sniffed, and no referrer to another origin (a sign-in link
 * carries its token). Not `no-referrer`: under it a browser sends `Origin: null` with the pages'
 * own form posts, which the origin check must then refuse.
 */
const SECURITY: Array<string | number> = [
  'Cache-Control',
  'no-store',
  'X-Content-Type-Options',
  'nosniff',
  'Content-Security-Policy',
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self' https://checkout.stripe.com https://billing.stripe.com; base-uri 'none'; frame-ancestors 'none'",
  'X-Frame-Options',
  'DENY',
  'Referrer-Policy',
  'same-origin',
];

export function answer(
  x: Exchange,
  status: number,
  type: string,
  body: string,
  extra: Array<string | number> = [],
): void {
  closeIfUnread(x);
  send(x, status, [...SECURITY, 'Content-Type', type, 'Content-Length', Buffer.byteLength(body), ...extra], body);
}

/**
 * An answer given while the request's body is still coming (refused before reading it, or cut
 * at 16 KiB) closes the connection: else the server would read and drop all of it to reach the
 * next request, and a client streaming a gigabyte would keep it busy for as long as it liked.
 */
function closeIfUnread(x: Exchange): void {
  if (!x.req.complete) x.res.setHeader('Connection', 'close');
}

export const json = (x: Exchange, status: number, value: unknown, extra: Array<string | number> = []): void =>
  answer(x, status, 'application/json', JSON.stringify(value), extra);

export const html = (x: Exchange, status: number, page: string, extra: Array<string | number> = []): void =>
  answer(x, status, 'text/html; charset=utf-8', page, extra);

export function empty(x: Exchange, status: number, extra: Array<string | number> = []): void {
  closeIfUnread(x);
  send(x, status, [...SECURITY, ...extra], '');
}

/** An error of the one table (http/error-kinds.ts), with the portal's headers. */
export function refuse(x: Exchange, kind: ErrorKind): void {
  const e = x.services.headers.errors[kind];
  answer(x, e.status, 'application/json', e.body);
}

/** A failure of an operation (a bad key body, the last key, an unknown id) with its own words. */
export function failed(x: Exchange, err: unknown): void {
  if (!isGatewayError(err) || FAILURE_STATUS[err.code] >= 500) return crashed(x, err);
  const body: Record<string, unknown> = { success: false, message: err.message };
  if (err.details.length > 0) body['details'] = err.details;
  json(x, FAILURE_STATUS[err.code], body);
}

const MAX_BODY = 16 * 1024;

/**
 * The body as text (JSON or a form), or null when it passes 16 KiB. The rest is left unread (the
 * answer then closes the connection).
 */
export async function readText(x: Exchange): Promise<string | null> {
  const body = await readRequestBody(x.req, MAX_BODY);
  return body === null ? null : body.toString('utf8');
}

/** A JSON or form body as an object (forms for the pages that work without script); null: unreadable. */
export async function readBody(x: Exchange): Promise<Record<string, unknown> | null> {
  const text = await readText(x);
  if (text === null) return null;
  const type = x.req.headers['content-type'] ?? '';
  if (type.startsWith('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text));
  if (text === '') return {};
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Whether the request is a form post of a page (answered with a redirect) rather than a call of the API. */
export const isForm = (req: IncomingMessage): boolean =>
  (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
