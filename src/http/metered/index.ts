/**
 * The metered pipeline, as passes run in order (the way http-proxy-3 writes its passes): one
 * `MeteredRequest` is made first and is the only argument of each, and a pass that answers the
 * request (or hands it to the store) ends the walk. The passes:
 *
 * 1. key (key.ts): read, check its form, hash it; the invalid-key throttle;
 * 2. body (here): the route prepares it from the prices; a refused query is answered here;
 * 3. etag (here): the price set's ETag and If-None-Match; HEAD and an uncounted 304 only peek;
 * 4. admit (count.ts): the cached account judged by the one rule, or the slow path;
 * 5. count (count.ts): the warm count, whose reply the request receives itself.
 *
 * Then the outcome (outcome.ts) and the answer (../answer.ts).
 */
import { crashed } from '../answer.js';
import type { Exchange, MeteredRoute } from '../core-types.js';
import { noneMatchHits } from '../etag.js';
import { headerValue, type Target } from '../request.js';
import { admit, count, MeteredRequest, type Pass } from './count.js';
import { takeKey } from './key.js';
import { refuse } from './outcome.js';

/** The body the route prepares from the price set in effect; a query it refuses is answered here, nothing counted. */
function body(m: MeteredRequest): boolean {
  const { x, route, target } = m;
  if (route === null) return true;
  const snapshot = x.services.book.snapshot();
  const accept = route.negotiates ? headerValue(x.req, 'accept') : undefined;
  const prepared = route.prepare(target.search, snapshot, target.path, accept);
  if (typeof prepared === 'string') {
    refuse(x, m.keyHash, prepared).catch((err: unknown) => crashed(x, err));
    return false;
  }
  m.body = prepared;
  m.snapshot = snapshot;
  return true;
}

/** The ETag of a conditional route; RFC 9110 §13.1.2: a matching If-None-Match gets a 304 without a body. */
function etag(m: MeteredRequest): boolean {
  const { x, route, snapshot } = m;
  const { etags, clock } = x.services;
  if (route?.conditional && snapshot !== null) {
    const tag = etags.of(snapshot, clock.now());
    const inm = headerValue(x.req, 'if-none-match');
    m.etag = tag;
    m.notModified = inm !== undefined && noneMatchHits(inm, tag);
  }
  // HEAD and an uncounted 304 read the usage without counting it: one store call, as a count.
  m.peek = x.req.method === 'HEAD' || (m.notModified && !x.core.countNotModified);
  return true;
}

/** The passes in order; each takes the request alone. */
const PASSES: readonly Pass[] = [takeKey, body, etag, admit, count];

export function metered(x: Exchange, route: MeteredRoute, target: Target): void {
  const m = new MeteredRequest(x, route, target, null);
  for (const pass of PASSES) if (!pass(m)) return;
}
