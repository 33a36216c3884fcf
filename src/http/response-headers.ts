import type { ServerResponse } from 'node:http';
import type { Coding } from './encoding.js';
import type { ErrorAnswer, ErrorAnswers, ErrorKind } from './error-kinds.js';
import { REQUEST_ID_HEADER } from './request-id.js';

/** The methods every public route answers. */
export const ALLOWED_METHODS = 'GET, HEAD';

export type HeaderList = Array<string | number>;

/**
 * The challenge of every 401 (RFC 9110 §11.6.1, §15.5.2): how the key is sent. A scheme of our
 * own, `ApiKey`, since no registered one carries a key in a named header or query parameter.
 */
export const API_KEY_CHALLENGE = 'ApiKey realm="fuel-api", header="X-API-Key", query="api_key"';

const BASE: HeaderList = ['Cache-Control', 'no-store', 'X-Content-Type-Options', 'nosniff'];
const JSON_TYPE = 'application/json';

/**
 * A header list built once for one kind of answer, whose last values change per request.
 * `fill` overwrites them in place and returns the list for `writeHead`, which turns it into the
 * header text before it returns: nothing can run between the fill and the copy.
 */
export class HeaderBlock {
  private readonly list: HeaderList;
  private readonly first: number;

  constructor(fixed: HeaderList, variable: string[]) {
    this.list = [...BASE, ...fixed];
    this.first = this.list.length + 1;
    for (const name of variable) this.list.push(name, 0);
  }

  fill(
    a: string | number,
    b: string | number = 0,
    c: string | number = 0,
    d: string | number = 0,
    e: string | number = 0,
    f: string | number = 0,
    g: string | number = 0,
  ): HeaderList {
    const l = this.list;
    const i = this.first;
    l[i] = a;
    if (i + 2 < l.length) l[i + 2] = b;
    if (i + 4 < l.length) l[i + 4] = c;
    if (i + 6 < l.length) l[i + 6] = d;
    if (i + 8 < l.length) l[i + 8] = e;
    if (i + 10 < l.length) l[i + 10] = f;
    if (i + 12 < l.length) l[i + 12] = g;
    return l;
  }
}

/**
 * The variable part of a counted answer's headers: length, the X-RateLimit-* trio, then the IETF
 * draft's fields (draft-ietf-httpapi-ratelimit-headers-11), whose values metered/rate.ts writes.
 */
const RATE = [
  'Content-Length',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
];

/** Where an account stands, as the rate headers say it (metered/rate.ts builds it). */
export interface RateFields {
  limit: number;
  remaining: number;
  /** Unix seconds of the period's end. */
  reset: number;
  /** The `RateLimit-Policy` value, built once per account and period. */
  policy: string;
  /** The `RateLimit` value. */
  rate: string;
}

/** Every header list (and error body) the public listener writes, built once per listener. */
export class HeaderLists {
  readonly errors: ErrorAnswers;
  /** Plain error answers: the whole list is fixed. */
  private readonly plain = new Map<ErrorKind, HeaderList>();
  private readonly retryAfter = new Map<ErrorKind, HeaderBlock>();
  private readonly limited = new Map<ErrorKind, HeaderBlock>();
  private readonly counted = new Map<string, HeaderBlock>();
  private readonly unratedBlocks = new Map<string, HeaderBlock>();
  private readonly tagged = new Map<string, HeaderBlock>();
  private readonly coded = new Map<string, HeaderBlock>();
  private readonly notModifiedBlock = new HeaderBlock([], ['ETag', ...RATE.slice(1)]);
  private readonly notModifiedUnratedBlock = new HeaderBlock([], ['ETag']);

  constructor(errors: ErrorAnswers) {
    this.errors = errors;
    for (const [kind, e] of Object.entries(this.errors) as Array<[ErrorKind, ErrorAnswer]>) {
      const fixed: HeaderList = ['Content-Type', JSON_TYPE, 'Content-Length', e.length];
      const extra: HeaderList =
        kind === 'method_not_allowed'
          ? ['Allow', ALLOWED_METHODS]
          : e.status === 401 && kind !== 'invalid_signature'
            ? ['WWW-Authenticate', API_KEY_CHALLENGE]
            : [];
      this.plain.set(kind, [...BASE, ...fixed, ...extra]);
      this.retryAfter.set(kind, new HeaderBlock(fixed, ['Retry-After']));
      this.limited.set(kind, new HeaderBlock(fixed, ['Retry-After', ...RATE.slice(1)]));
    }
  }

  error(kind: ErrorKind): HeaderList {
    return this.plain.get(kind) as HeaderList;
  }

  /** An error answer with `Retry-After` (throttled, unavailable). */
  errorRetry(kind: ErrorKind, seconds: number): HeaderList {
    return (this.retryAfter.get(kind) as HeaderBlock).fill(seconds);
  }

  /** An allowance used up: `Retry-After` and the rate headers. */
  errorLimited(kind: ErrorKind, retryAfter: number, r: RateFields): HeaderList {
    return (this.limited.get(kind) as HeaderBlock).fill(retryAfter, r.limit, r.remaining, r.reset, r.policy, r.rate);
  }

  /**
   * A counted 200 (or a usage check): its length, the rate headers and, on a conditional route,
   * the ETag. `coding`: for an answer offered compressed, the coding sent (with `Vary`).
   */
  counted200(
    contentType: string,
    length: number,
    r: RateFields,
    etag: string | null = null,
    coding: Coding | null = null,
  ): HeaderList {
    const blocks = coding === null ? (etag === null ? this.counted : this.tagged) : this.coded;
    const key = coding === null ? contentType : `${contentType}|${coding}|${etag !== null}`;
    let block = blocks.get(key);
    if (!block) {
      const fixed: HeaderList = ['Content-Type', contentType];
      if (coding !== null) fixed.push('Vary', 'Accept-Encoding');
      if (coding !== null && coding !== 'identity') fixed.push('Content-Encoding', coding);
      block = new HeaderBlock(fixed, etag === null ? RATE : [...RATE, 'ETag']);
      blocks.set(key, block);
    }
    return block.fill(length, r.limit, r.remaining, r.reset, r.policy, r.rate, etag ?? 0);
  }

  /** A 304 Not Modified: the ETag and the rate headers, no body and so no length (RFC 9110 §15.4.5). */
  notModified(etag: string, r: RateFields): HeaderList {
    return this.notModifiedBlock.fill(etag, r.limit, r.remaining, r.reset, r.policy, r.rate);
  }

  /** A 304 while the store cannot say the usage (store.on_error: allow). */
  notModifiedUnrated(etag: string): HeaderList {
    return this.notModifiedUnratedBlock.fill(etag);
  }

  /** An answer without rate headers (health, readiness, an unmetered 200). */
  unrated(contentType: string, length: number): HeaderList {
    let block = this.unratedBlocks.get(contentType);
    if (!block) {
      block = new HeaderBlock(['Content-Type', contentType], ['Content-Length']);
      this.unratedBlocks.set(contentType, block);
    }
    return block.fill(length);
  }
}

/**
 * Writes an answer; a HEAD gets the headers alone. `requestId` (null: already set on `res`) goes
 * on the end of the list for the one `writeHead`, which copies it before it returns: the lists
 * are shared, so it is taken off again at once.
 */
export function write(
  res: ServerResponse,
  head: boolean,
  status: number,
  headers: HeaderList,
  body: string | Buffer,
  requestId: string | null,
): void {
  if (requestId === null) res.writeHead(status, headers);
  else {
    headers.push(REQUEST_ID_HEADER, requestId);
    try {
      res.writeHead(status, headers);
    } finally {
      headers.length -= 2;
    }
  }
  res.end(head ? undefined : body);
}
