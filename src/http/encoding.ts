/**
 * Content codings (RFC 9110 §8.4, §12.5.3): which one a request accepts, and the compressed bytes
 * of answers built once. Compression never runs per request for an answer built once: its bytes
 * are made with it (the API document and the assets at start), on the thread pool as its price set
 * comes into effect (the page: `encodeAsync`) or, for a historical answer kept per price set and
 * query, at the first request that asks for the coding.
 * An answer whose per-request `usage` sits at its end (changes.php) is gzipped as a compressed
 * head, built once, followed by the usage in a stored deflate block (`SplicedGzip`).
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, brotliCompressSync, constants, crc32, deflateRawSync, gzip, gzipSync } from 'node:zlib';
import { LRUCache } from 'lru-cache';

export type Coding = 'br' | 'gzip' | 'identity';

/** Below this an answer is sent as it is: the saving is smaller than a packet's headers. */
export const MIN_COMPRESS_BYTES = 1024;

export interface Encoded {
  gzip: Buffer | null;
  /** Only where it pays: smaller than the gzip bytes. */
  br: Buffer | null;
}

/** Compression effort: the most for answers built once per price set or at start, less for per-query ones. */
export type Effort = 'max' | 'fast';

const NONE: Encoded = { gzip: null, br: null };
const gzipOptions = (effort: Effort) => ({ level: effort === 'max' ? 9 : 6 });
/**
 * Brotli 10, not 11, for bytes built once: on the 290 KB page, 11 took 0.71–0.83 s of CPU at every
 * gateway start and price set for 26.9 KB, 10 took 0.25–0.29 s for 28.7 KB (7% more bytes).
 */
const brotliOptions = (body: Buffer, effort: Effort) => ({
  params: {
    [constants.BROTLI_PARAM_QUALITY]: effort === 'max' ? 10 : 5,
    [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
  },
});
/** The codings that pay: gzip smaller than the body, br smaller than both. */
const paying = (body: Buffer, gz: Buffer, br: Buffer): Encoded => ({
  gzip: gz.length < body.length ? gz : null,
  br: br.length < Math.min(gz.length, body.length) ? br : null,
});

/**
 * The 'max' bytes by a digest of their body, for the process: gateways that share one (the tests'
 * in-process gateways, an app restarted in place) compress the same document and assets once,
 * which was a third of a start's CPU.
 */
const made = new LRUCache<string, Encoded>({ max: 64 });

export function encode(body: Buffer, effort: Effort): Encoded {
  if (body.length < MIN_COMPRESS_BYTES) return NONE;
  if (effort === 'fast') return encodeNow(body, effort);
  const digest = createHash('sha256').update(body).digest('base64');
  let encoded = made.get(digest);
  if (!encoded) {
    encoded = encodeNow(body, effort);
    made.set(digest, encoded);
  }
  return encoded;
}

function encodeNow(body: Buffer, effort: Effort): Encoded {
  return paying(body, gzipSync(body, gzipOptions(effort)), brotliCompressSync(body, brotliOptions(body, effort)));
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * `encode` on libuv's thread pool: the page's most compressed brotli takes about 0.3 s of CPU,
 * which no request (nor the event loop) may wait for.
 */
export async function encodeAsync(body: Buffer, effort: Effort): Promise<Encoded> {
  if (body.length < MIN_COMPRESS_BYTES) return NONE;
  const [gz, br] = await Promise.all([
    gzipAsync(body, gzipOptions(effort)),
    brotliAsync(body, brotliOptions(body, effort)),
  ]);
  return paying(body, gz, br);
}

/**
 * The coding to send, from Accept-Encoding (`value`, repeated fields joined) and the codings on
 * offer: the highest q-value wins, ties go br, gzip, identity. No field: identity. `*` stands
 * for every coding not named; `identity` is acceptable unless `identity;q=0`, or `*;q=0`
 * without it, says otherwise. When nothing on offer is acceptable the answer goes unencoded
 * (RFC 9110 §12.5.3 allows a 406; an unencoded answer serves more clients).
 */
export function negotiate(value: string | undefined, br: boolean, gzip: boolean): Coding {
  if (value === undefined || (!br && !gzip)) return 'identity';
  let qBr = -1;
  let qGzip = -1;
  let qIdentity = -1;
  let qStar = -1;
  for (const part of value.split(',')) {
    const [rawName, ...params] = part.split(';');
    const name = (rawName as string).trim().toLowerCase();
    if (name === '') continue;
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(p);
      if (m) q = Math.min(1, Number(m[1]));
      else if (/^\s*q\s*=/i.test(p)) q = 0; // an unreadable weight: not a clear yes
    }
    if (name === 'br') qBr = Math.max(qBr, q);
    else if (name === 'gzip' || name === 'x-gzip') qGzip = Math.max(qGzip, q);
    else if (name === 'identity') qIdentity = Math.max(qIdentity, q);
    else if (name === '*') qStar = Math.max(qStar, q);
  }
  const of = (q: number): number => (q >= 0 ? q : qStar);
  const b = br ? of(qBr) : -1;
  const g = gzip ? of(qGzip) : -1;
  // identity is acceptable unless excluded: named with q=0, or not named and *;q=0.
  const i = qIdentity >= 0 ? qIdentity : qStar === 0 ? 0 : 0.001;
  const best = Math.max(b, g, i);
  if (best <= 0) return 'identity';
  return b === best ? 'br' : g === best ? 'gzip' : 'identity';
}

/** A gzip member whose deflate stream is a compressed head, flushed to a byte boundary, then the tail given per request. */
export interface SplicedGzip {
  /** Gzip header and the head's deflate blocks (not final). */
  start: Buffer;
  headCrc: number;
  headBytes: number;
}

const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);

export function spliceableGzip(head: string): SplicedGzip {
  const bytes = Buffer.from(head);
  const deflated = deflateRawSync(bytes, { level: 9, finishFlush: constants.Z_SYNC_FLUSH });
  return { start: Buffer.concat([GZIP_HEADER, deflated]), headCrc: crc32(bytes), headBytes: bytes.length };
}

/** The whole gzip answer: the prebuilt start, the tail as a final stored block (≤ 65535 bytes), the trailer. */
export function splicedGzip(s: SplicedGzip, tail: string): Buffer {
  const t = Buffer.from(tail);
  const out = Buffer.allocUnsafe(s.start.length + 5 + t.length + 8);
  s.start.copy(out, 0);
  let o = s.start.length;
  out[o] = 1; // BFINAL, stored
  out.writeUInt16LE(t.length, o + 1);
  out.writeUInt16LE(~t.length & 0xffff, o + 3);
  o += 5;
  t.copy(out, o);
  o += t.length;
  out.writeUInt32LE(crc32(t, s.headCrc) >>> 0, o);
  out.writeUInt32LE((s.headBytes + t.length) >>> 0, o + 4);
  return out;
}

/**
 * The compressed forms of a metered body (core-types.ts `MeteredBody`), kept with it: a whole one is
 * encoded at the first request that accepts a coding; one with `usage` spliced in gets its head
 * gzipped once and the usage added per request as a stored block.
 */
export interface Compressed {
  whole: (() => Encoded) | null;
  spliced: SplicedGzip | null;
}

/** For a metered body of `head` (and, `withUsage`, a usage and `tail` after it); null below MIN_COMPRESS_BYTES. */
export function compressible(head: string, withUsage: boolean): Compressed | null {
  if (Buffer.byteLength(head) < MIN_COMPRESS_BYTES) return null;
  if (withUsage) return { whole: null, spliced: spliceableGzip(head) };
  let encoded: Encoded | null = null;
  return { whole: () => (encoded ??= encode(Buffer.from(head), 'fast')), spliced: null };
}
