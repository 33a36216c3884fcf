/**
 * Writing the pass-through cache's answers: from a stored entry (with the caller's usage), from
 * an origin answer read whole, or an error of our own. Each says whether it was a success (counted).
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { type ErrorAnswer, type ErrorKind, kindForStatus } from '../../http/error-kinds.js';
import { injectUsage, specErrorBody } from '../bodies.js';
import { type ForwardSpec, ownErrorBody } from '../forward-spec.js';
import { BASE, headerObject, JSON_TYPE, passedHeaders } from '../forwarded-headers.js';
import type { OriginAnswer } from '../origin.js';
import type { CacheEntry } from './entries.js';

export type XCache = 'HIT' | 'MISS' | 'STALE' | 'BYPASS';

/** What every reply needs besides the answer. */
export interface ReplyParts {
  errors: Record<ErrorKind, ErrorAnswer>;
  log: Logger;
}

/** An entry's headers that stay as they are for every hit (CacheEntry.fixedHeaders). */
export function fixedHeaders(replayed: Record<string, string>): Array<string | number> {
  return Object.entries({ ...replayed, ...BASE }).flat();
}

/**
 * A stored entry, as a success: its body (JSON: with the caller's usage last), `Age`, `X-Cache`.
 * Only the caller's usage and rate headers, `X-Cache` and `Age` are added to what was prepared
 * when the entry was stored; headers and body go out in one write.
 */
export function replyEntry(
  res: ServerResponse,
  spec: ForwardSpec,
  e: CacheEntry,
  xCache: XCache,
  now: number,
  head: boolean,
): void {
  const json = e.kind === 'json';
  const headers = e.fixedHeaders.concat(spec.headers);
  const length = json ? e.bytes + Buffer.byteLength(spec.usage) + 1 : e.bytes;
  const age = Math.max(0, Math.floor((now - e.storedAt) / 1000));
  headers.push('x-cache', xCache, 'age', String(age), 'content-length', length);
  res.writeHead(200, headers);
  res.end(head ? undefined : json ? `${e.text}${spec.usage}}` : e.text);
}

/**
 * An origin answer read whole, as the streamed pass-through answers it (proxy.ts): a JSON success
 * gets the usage, an error status the spec's error body or ours, a 401 (the origin refused the
 * service key) is our 502. Returns whether it was a success.
 */
export function replyAnswer(
  res: ServerResponse,
  spec: ForwardSpec,
  a: OriginAnswer,
  xCache: XCache,
  parts: ReplyParts,
): boolean {
  const added = { ...headerObject(spec.headers), 'x-cache': xCache };
  const refunded = { ...headerObject(spec.refunded), 'x-cache': xCache };
  if (a.status >= 200 && a.status < 300) {
    const injected = JSON_TYPE.test(a.headers['content-type'] ?? '')
      ? injectUsage(a.body, a.headers['content-encoding'], spec.usage)
      : null;
    if (injected !== null) {
      const headers = passedHeaders(a.headers, ['content-encoding', 'content-length'], added);
      res.writeHead(a.status, { ...headers, 'content-length': Buffer.byteLength(injected) });
      res.end(injected);
    } else {
      res.writeHead(a.status, {
        ...passedHeaders(a.headers, ['content-length'], added),
        'content-length': a.body.length,
      });
      res.end(a.body);
    }
    return true;
  }
  if (a.status === 401) {
    parts.log.error({ route: spec.route }, 'the origin refused the service key (upstream.api_key)');
    replyFailure(res, spec, 'upstream_unavailable', xCache, parts);
    return false;
  }
  if (a.status >= 400) {
    const own = specErrorBody(a.body);
    const body = own ?? ownErrorBody(parts.errors[kindForStatus(a.status)].body, a.status, spec);
    res.writeHead(a.status, {
      ...BASE,
      ...refunded,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
    return false;
  }
  res.writeHead(a.status, {
    ...passedHeaders(a.headers, ['content-length'], refunded),
    'content-length': a.body.length,
  });
  res.end(a.body);
  return false;
}

/** No usable answer from the origin (unreachable, too slow): our 502 or 504, the request given back. */
export function replyFailure(
  res: ServerResponse,
  spec: ForwardSpec,
  kind: ErrorKind,
  xCache: XCache,
  parts: ReplyParts,
): void {
  const e = parts.errors[kind];
  const body = ownErrorBody(e.body, e.status, spec);
  res.writeHead(e.status, {
    ...BASE,
    ...headerObject(spec.refunded),
    'x-cache': xCache,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
