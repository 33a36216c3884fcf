/**
 * A whole answer built once (the page per price set, the API document, the page's assets): its
 * header lists and body, and with an ETag the 304 it answers to a matching If-None-Match.
 */
import { send } from './answer.js';
import { noneMatchHits } from './etag.js';
import type { HeaderList } from './headers.js';
import { headerValue } from './request.js';
import type { Exchange, HandlerRoute } from './types.js';

export class Whole {
  readonly ok: HeaderList;
  /** The 304's headers: those a 200 would carry that RFC 9110 §15.4.5 asks for. */
  readonly notModified: HeaderList;

  /** `fixed`: the headers beside type and length (Cache-Control among them). */
  constructor(
    contentType: string,
    readonly body: string,
    fixed: HeaderList,
    readonly etag: string | null = null,
  ) {
    const tag = etag === null ? [] : ['ETag', etag];
    this.ok = ['Content-Type', contentType, 'Content-Length', Buffer.byteLength(body), ...fixed, ...tag];
    const cache = fixed.indexOf('Cache-Control');
    this.notModified = [...tag, ...(cache >= 0 ? fixed.slice(cache, cache + 2) : [])];
  }

  /** The same body and headers under another ETag. */
  tagged(etag: string): Whole {
    const fixed = this.ok.slice(4, this.etag === null ? undefined : -2);
    return new Whole(this.ok[1] as string, this.body, fixed, etag);
  }
}

/** Sends a whole answer, or its 304 when the request's If-None-Match matches its ETag. */
export function sendWhole(x: Exchange, w: Whole): void {
  if (w.etag !== null) {
    const inm = headerValue(x.req, 'if-none-match');
    if (inm !== undefined && noneMatchHits(inm, w.etag)) return send(x, 304, w.notModified, '');
  }
  send(x, 200, w.ok, w.body);
}

/** The headers of a fixed answer beside type and length: its caching, and no sniffing. */
export const fixedHeaders = (cacheControl: string, ...more: HeaderList): HeaderList => [
  'Cache-Control',
  cacheControl,
  'X-Content-Type-Options',
  'nosniff',
  ...more,
];

/** A route that answers with a whole answer built at start (the page's assets). */
export const wholeRoute = (name: string, w: Whole): HandlerRoute => ({
  kind: 'handler',
  name,
  handle: (x) => sendWhole(x, w),
});
