import type { Messages } from '../config/config-schema.js';

/**
 * The one table of error kinds: each maps to an HTTP status and to the configurable message of
 * the same name (config `messages`). Every error answer of the public listener comes from here.
 */
export const ERROR_STATUS = {
  missing_key: 401,
  invalid_key: 401,
  expired_key: 401,
  inactive_key: 403,
  account_unpaid: 403,
  key_scope: 403,
  key_address: 403,
  limit_monthly: 429,
  limit_trial: 429,
  burst: 429,
  throttled: 429,
  invalid_month: 400,
  invalid_year: 400,
  invalid_range: 400,
  invalid_format: 400,
  invalid_region: 400,
  bad_request: 400,
  request_timeout: 408,
  headers_too_large: 431,
  historical_disabled: 501,
  not_found: 404,
  method_not_allowed: 405,
  unavailable: 503,
  upstream_unavailable: 502,
  upstream_timeout: 504,
  internal: 500,
  invalid_signature: 401,
  report_too_large: 413,
  too_many_tokens: 400,
  invalid_report: 400,
  not_signed_in: 401,
  forbidden: 403,
  invalid_link: 400,
  invalid_passkey: 400,
  stripe_signature: 400,
  stripe_event_too_large: 413,
} as const satisfies Record<keyof Messages, number>;

export type ErrorKind = keyof typeof ERROR_STATUS;

// Which message an origin's error status borrows when its body is not the spec's error body.
const BORROWED: Partial<Record<number, ErrorKind>> = {
  400: 'bad_request',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  // The origin throttles the gateway's key, not the client's: no allowance message.
  429: 'unavailable',
  431: 'headers_too_large',
  502: 'upstream_unavailable',
  503: 'unavailable',
  504: 'upstream_timeout',
};

export const kindForStatus = (status: number): ErrorKind =>
  BORROWED[status] ?? (status < 500 ? 'bad_request' : 'internal');

export interface ErrorAnswer {
  status: number;
  body: string;
  length: number;
}

/** Error bodies, serialised once from the configured messages. */
/** Every error kind's answer, built once per process from the configured messages (app.ts). */
export type ErrorAnswers = Record<ErrorKind, ErrorAnswer>;

export function buildErrorAnswers(messages: Required<Messages>): ErrorAnswers {
  const out = {} as Record<ErrorKind, ErrorAnswer>;
  for (const kind of Object.keys(ERROR_STATUS) as ErrorKind[]) {
    const body = JSON.stringify({ success: false, message: messages[kind] });
    out[kind] = { status: ERROR_STATUS[kind], body, length: Buffer.byteLength(body) };
  }
  return out;
}

/** An error body (`{"success":false,"message":…}`) with the request id as `ref` (`idJson`: JSON-encoded). */
export const referencedBody = (body: string, idJson: string): string => `${body.slice(0, -1)},"ref":${idJson}}`;
