/**
 * The origin's answer bodies: read up to a cap, decoded, a JSON success given the gateway's
 * `usage`, and the spec's own error body told from anything else.
 */
import type { IncomingMessage } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/** The largest JSON success read (and decoded) to put the usage in. */
export const MAX_JSON_BYTES = 4 << 20;
/** The largest error body read to tell the spec's error body from anything else. */
export const MAX_ERROR_BYTES = 64 << 10;

/**
 * Reads up to `max` bytes: 'complete', 'too_large' (the rest stays unread, the stream paused)
 * or 'cut' (the origin's connection broke mid-body).
 */
export function read(
  stream: IncomingMessage,
  max: number,
  done: (chunks: Buffer[], state: 'complete' | 'too_large' | 'cut') => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (state: 'complete' | 'too_large' | 'cut'): void => {
    if (finished) return;
    finished = true;
    stream.off('data', onData);
    done(chunks, state);
  };
  const onData = (c: Buffer): void => {
    chunks.push(c);
    size += c.length;
    if (size <= max) return;
    stream.pause();
    finish('too_large');
  };
  stream.on('data', onData);
  stream.once('end', () => finish('complete'));
  stream.once('aborted', () => finish('cut'));
  stream.once('error', () => finish('cut'));
}

/** A body through its Content-Encoding; null for an encoding not known (a corrupt body throws). */
export function decode(body: Buffer, encoding: string | undefined): Buffer | null {
  const limit = { maxOutputLength: MAX_JSON_BYTES };
  switch ((encoding ?? 'identity').trim().toLowerCase()) {
    case 'identity':
      return body;
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(body, limit);
    case 'deflate':
      return inflateSync(body, limit);
    case 'br':
      return brotliDecompressSync(body, limit);
  }
  return null;
}

/** The origin's JSON object without its `usage`, as JSON text; null when it is not a JSON object. */
export function withoutUsage(raw: Buffer, encoding: string | undefined): string | null {
  let doc: unknown;
  try {
    const body = decode(raw, encoding);
    if (body === null) return null;
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return null;
  delete (doc as Record<string, unknown>)['usage'];
  return JSON.stringify(doc);
}

/**
 * What comes before the usage when it is put last into `rest` (a JSON object's text): the
 * answer is this, the usage, and `}`.
 */
export const usagePrefix = (rest: string): string => (rest === '{}' ? '{"usage":' : `${rest.slice(0, -1)},"usage":`);

/** The origin's JSON object with its `usage` replaced by ours as the last key; null when it is not a JSON object. */
export function injectUsage(raw: Buffer, encoding: string | undefined, usage: string): string | null {
  const rest = withoutUsage(raw, encoding);
  return rest === null ? null : `${usagePrefix(rest)}${usage}}`;
}

/** The body itself when it is exactly the spec's error body `{"success":false,"message":"…"}`. */
export function specErrorBody(raw: Buffer): string | null {
  try {
    const doc: unknown = JSON.parse(raw.toString('utf8'));
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return null;
    const keys = Object.keys(doc);
    const d = doc as Record<string, unknown>;
    return keys.length === 2 && d['success'] === false && typeof d['message'] === 'string'
      ? raw.toString('utf8')
      : null;
  } catch {
    return null;
  }
}
