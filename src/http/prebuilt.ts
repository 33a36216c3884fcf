/**
 * A whole answer built once (the page per price set, the API document, the page's assets): its
 * header lists and bytes in each content coding that pays (encoding.ts), and with an ETag the
 * 304 it answers to a matching If-None-Match.
 */
import { send } from './answer.js';
import type { Exchange, HandlerRoute } from './core-types.js';
import { type Encoded, encode, negotiate } from './encoding.js';
import { noneMatchHits } from './etag.js';
import { headerValue } from './request.js';
import type { HeaderList } from './response-headers.js';

interface Variant {
  headers: HeaderList;
  body: Buffer;
}

export class Whole {
  readonly identity: Variant;
  readonly gzip: Variant | null;
  readonly br: Variant | null;
  /** The 304's headers: those a 200 would carry that RFC 9110 §15.4.5 asks for. */
  readonly notModified: HeaderList;

  /**
   * `fixed`: the headers beside type, length and coding (Cache-Control among them). `encoded`:
   * bytes compressed before (the document's, shared by its ETags); by default made here.
   * `varies`: whether the answer names Accept-Encoding in Vary; so it does while its compressed
   * bytes are still being made (the page's first answers), not only once they are here.
   */
  readonly contentType: string;
  readonly fixed: HeaderList;
  readonly etag: string | null;
  readonly encoded: Encoded;

  constructor(o: {
    contentType: string;
    body: string | Buffer;
    fixed: HeaderList;
    etag?: string | null;
    encoded?: Encoded;
    varies?: boolean;
  }) {
    const { contentType, body, fixed } = o;
    const etag = o.etag ?? null;
    const encoded = o.encoded ?? encode(Buffer.from(body), 'max');
    const varies = o.varies ?? (encoded.gzip !== null || encoded.br !== null);
    this.contentType = contentType;
    this.fixed = fixed;
    this.etag = etag;
    this.encoded = encoded;
    const bytes = Buffer.from(body);
    const tag = etag === null ? [] : ['ETag', etag];
    const vary = varies ? ['Vary', 'Accept-Encoding'] : [];
    const variant = (b: Buffer, coding: HeaderList): Variant => ({
      body: b,
      headers: ['Content-Type', contentType, 'Content-Length', b.length, ...coding, ...fixed, ...vary, ...tag],
    });
    this.identity = variant(bytes, []);
    this.gzip = encoded.gzip && variant(encoded.gzip, ['Content-Encoding', 'gzip']);
    this.br = encoded.br && variant(encoded.br, ['Content-Encoding', 'br']);
    const cache = fixed.indexOf('Cache-Control');
    this.notModified = [...tag, ...(cache >= 0 ? fixed.slice(cache, cache + 2) : []), ...vary];
  }

  /** The same bytes and headers under another ETag. */
  tagged(etag: string): Whole {
    const { contentType, fixed, encoded } = this;
    return new Whole({ contentType, body: this.identity.body, fixed, etag, encoded });
  }
}

/** Sends a whole answer in the coding the request prefers, or its 304 when If-None-Match matches its ETag. */
export function sendWhole(x: Exchange, w: Whole): void {
  if (w.etag !== null) {
    const inm = headerValue(x.req, 'if-none-match');
    if (inm !== undefined && noneMatchHits(inm, w.etag)) return send(x, 304, w.notModified, '');
  }
  const coding = negotiate(headerValue(x.req, 'accept-encoding'), w.br !== null, w.gzip !== null);
  const v = (coding === 'br' && w.br) || (coding === 'gzip' && w.gzip) || w.identity;
  send(x, 200, v.headers, v.body);
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
