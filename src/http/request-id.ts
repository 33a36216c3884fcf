/**
 * Request ids (issue 42): every request has one, returned in `X-Request-Id`, logged as `req_id`
 * and given as `ref` in a 5xx body. A trusted proxy's id (HAProxy's `unique-id-header`) is kept,
 * so that the balancer's log line and the gateway's join; any other is replaced. A new id is a
 * per-process random prefix and a counter: unique across processes and restarts without a
 * random draw per request.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { canonicalIp, type TrustedProxies } from './client.js';
import { headerValue } from './request.js';

export const REQUEST_ID_HEADER = 'X-Request-Id';

// 1–128 visible ASCII characters; a repeated header joins with ", " and so is refused.
const VALID = /^[\x21-\x7e]{1,128}$/;
// Characters that a JSON string must escape: such an id is encoded once, when it is taken.
const NEEDS_ESCAPE = /["\\]/;

const prefix = randomBytes(9).toString('base64url');
let counter = 0;

/** A new id: `<12 random chars>-<counter in base 36>`. */
export const newRequestId = (): string => `${prefix}-${(++counter).toString(36)}`;

export interface RequestId {
  id: string;
  /** The id as a JSON string, for the access log. */
  json: string;
}

/** The request's id: its `X-Request-Id` when a trusted proxy sent a valid one, else a new one. */
export function requestId(req: IncomingMessage, trusted: TrustedProxies): RequestId {
  if (trusted.size > 0) {
    const given = headerValue(req, 'x-request-id');
    if (given !== undefined && VALID.test(given) && trusted.has(canonicalIp(req.socket.remoteAddress ?? '') ?? ''))
      return { id: given, json: NEEDS_ESCAPE.test(given) ? JSON.stringify(given) : `"${given}"` };
  }
  const id = newRequestId();
  return { id, json: `"${id}"` };
}
