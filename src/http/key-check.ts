/**
 * A key's own restrictions (expiry, allowlist, scope: keys/gate.ts) as a request puts them to
 * the admission rule (quota/account-entry.ts `refusal`), from the cached entry: no store round
 * trip. The metered request is its own `KeyRequest` (metered/count.ts); the other routes that
 * take a key ask `keyRequest`.
 */
import type { KeyRequest } from '../keys/gate.js';
import { clientIp } from './client.js';
import type { Exchange } from './core-types.js';

/** The request `x` as the admission rule sees it: its route's scope, the time, the client's address (asked only for an allowlist). */
export function keyRequest(x: Exchange): KeyRequest {
  return {
    scope: x.route.scope,
    now: () => x.services.clock.now(),
    address: () => clientIp(x.req, x.core.trustedProxies),
  };
}

/**
 * `X-API-Key-Expires` while the request's key expires within `keys.expiry_warning_days`, on
 * every answer to it: a key without expiry costs one comparison.
 */
export function warnOfExpiry(x: Exchange): void {
  const gate = x.account?.gate;
  if (gate === undefined || gate.warnFromMs === Infinity || x.services.clock.now() < gate.warnFromMs) return;
  x.res.setHeader('X-API-Key-Expires', gate.expiresHeader);
}
