/**
 * The key pass, the first of every route that takes a key: read it, check its form, hash it, and
 * let the invalid-key throttle refuse a blocked address. A refused request is answered here; an
 * accepted one goes on with its key.
 */
import type { KnownKey } from '../../keys/key-hashes.js';
import type { HeldAccount } from '../../quota/meter.js';
import { clientOf, fail } from '../answer.js';
import type { Exchange, ListenerCore } from '../core-types.js';
import { headerValue, isPlainKeySearch, PLAIN_KEY_PARAM, readKey } from '../request.js';
import type { MeteredRequest } from './count.js';
import { answerThrottled, invalidKey } from './outcome.js';

/** The metered request's key pass (index.ts). */
export function takeKey(m: MeteredRequest): boolean {
  const key = keyOf(m.x, m.target.search);
  if (key === null) return false;
  m.key = key;
  m.keyHash = key.hash;
  return true;
}

/**
 * The key a request carries, or null once the request has been refused for it (throttled
 * address, missing or malformed key). Every front door that takes a key starts here.
 */
export function keyOf(x: Exchange, search: string): KnownKey<HeldAccount> | null {
  const { core } = x;
  const header = keyHeader(x);
  const plain = knownPlainKey(core, search, header);
  // Refused keys too: a flood of made-up `?api_key=K` keys logs the route's redacted URL,
  // never scrubbing and redacting each one (the log's costliest step).
  if ((plain !== undefined || isPlainKeySearch(search)) && x.req.url?.startsWith('/'))
    x.loggedUrl = x.route.plainKeyUrl;
  const key = plain ?? readAndHash(core, search, header);
  if (throttled(x, typeof key === 'string' ? null : key.hash)) return null;
  if (key === 'missing') {
    core.invalidKeys.missing.inc();
    fail(x, 'missing_key');
    return null;
  }
  if (key === 'malformed') {
    invalidKey(x, 'malformed');
    return null;
  }
  return key;
}

/**
 * The key the request's headers carry: `X-API-Key`, and on a route that names another header
 * (FuelSA's `key`) that one too. Two that differ are joined as a repeated header is (", "), which
 * no key can contain: refused as malformed, never one picked over the other.
 */
function keyHeader(x: Exchange): string | undefined {
  const standard = headerValue(x.req, 'x-api-key');
  const name = x.route.keyHeader;
  if (name === undefined) return standard;
  const other = headerValue(x.req, name);
  if (other === undefined || other === '') return standard;
  return standard === undefined || standard === '' || standard === other ? other : `${standard}, ${other}`;
}

/**
 * The common request, `?api_key=K` alone, with a key seen before: found with one lookup and no
 * parsing, since only well-formed keys are remembered (and those need no decoding).
 */
function knownPlainKey(l: ListenerCore, search: string, header: string | undefined): KnownKey<HeldAccount> | undefined {
  if (!search.startsWith(PLAIN_KEY_PARAM)) return undefined;
  const key = search.slice(PLAIN_KEY_PARAM.length);
  return header === undefined || header === key ? l.keyHashes.seen(key) : undefined;
}

function readAndHash(
  l: ListenerCore,
  search: string,
  header: string | undefined,
): KnownKey<HeldAccount> | 'missing' | 'malformed' {
  const input = readKey(search, header, l.maxKeyLength);
  if (input.kind !== 'key') return input.kind;
  return l.keyHashes.of(input.key) ?? 'malformed';
}

/**
 * A blocked address is refused before anything else, except for keys this process knows as
 * active and, at a small bounded rate, other well-formed keys: the block stops key scanning
 * without locking out customers who share the address (NAT, a proxy).
 */
function throttled(x: Exchange, keyHash: string | null): boolean {
  const { throttle, meter } = x.services;
  if (!throttle.anyBlocked()) return false;
  const blockedMs = throttle.blockedFor(clientOf(x));
  if (blockedMs <= 0) return false;
  if (keyHash !== null && (meter.knowsActive(keyHash) || throttle.letThrough(clientOf(x)))) return false;
  answerThrottled(x, blockedMs);
  return true;
}
