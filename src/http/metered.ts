/**
 * The metered pipeline, as plain steps run in order (the way http-proxy-3 writes its passes),
 * each handing on to the next and none coming back: the key (api-key.ts) → the body the route
 * prepares from the prices → the ETag → the count (count.ts, count-reply.ts) → the outcome's answer
 * (outcome.ts → answer.ts). What the later steps need goes on once, to the count, which sets it
 * in a `MeteredRequest`.
 */
import { crashed } from './answer.js';
import { keyOf } from './api-key.js';
import type { Exchange, MeteredRoute } from './core-types.js';
import { count } from './count.js';
import { noneMatchHits } from './etag.js';
import { refuse } from './outcome.js';
import { headerValue, type Target } from './request.js';

export function metered(x: Exchange, route: MeteredRoute, { search, path }: Target): void {
  const { listener: l } = x;
  const key = keyOf(x, search);
  if (key === null) return;
  const snap = l.book.snapshot();
  const body = route.prepare(search, snap, path, route.negotiates ? headerValue(x.req, 'accept') : undefined);
  if (typeof body === 'string') return void refuse(x, key.hash, body).catch((err: unknown) => crashed(x, err));
  const etag = route.conditional ? l.etags.of(snap, l.clock.now()) : null;
  // RFC 9110 §13.1.2: a matching If-None-Match gets a 304 without a body.
  const notModified = etag !== null && noneMatches(x, etag);
  // HEAD and an uncounted 304 read the usage without counting it: one store call, as a count.
  const peek = x.req.method === 'HEAD' || (notModified && !l.countNotModified);
  count(x, key, body, etag, notModified, peek);
}

function noneMatches(x: Exchange, etag: string): boolean {
  const inm = headerValue(x.req, 'if-none-match');
  return inm !== undefined && noneMatchHits(inm, etag);
}
