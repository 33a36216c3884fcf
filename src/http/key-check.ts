/**
 * A key's own restrictions (expiry, allowlist, scope: keys/gate.ts) for one request, from the
 * cached entry: no store round trip. Not a step of the walk: the steps that hold an entry (the
 * count, the usage routes, the pass-through) and the answer ask it.
 */
import type { KeyRefusal } from '../keys/gate.js';
import type { AccountEntry, KeyCheck } from '../quota/meter.js';
import { clientIp } from './client.js';
import type { Exchange } from './core-types.js';

/** Why the entry's key may not make this request (null: it may). A key without restrictions costs one read. */
export function keyRefusal(x: Exchange, entry: AccountEntry): KeyRefusal | null {
  const { gate } = entry;
  if (gate.open) return null;
  return gate.refusal(x.listener.clock.now(), x.route.scope, () => clientIp(x.req, x.listener.trustedProxies));
}

/** `keyRefusal` for the meter's slow paths, which judge the entry they load. */
export const keyCheck =
  (x: Exchange): KeyCheck =>
  (entry) =>
    keyRefusal(x, entry);

/**
 * `X-API-Key-Expires` while the request's key expires within `keys.expiry_warning_days`, on
 * every answer to it: a key without expiry costs one comparison.
 */
export function warnOfExpiry(x: Exchange): void {
  const gate = x.account?.gate;
  if (gate === undefined || gate.warnFromMs === Infinity || x.listener.clock.now() < gate.warnFromMs) return;
  x.res.setHeader('X-API-Key-Expires', gate.expiresHeader);
}
