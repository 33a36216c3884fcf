import ipaddr from 'ipaddr.js';
import { KEY_SCOPES } from '../store/keys/interface.js';
import type { KeyScope, StoredKey } from '../store/store.js';

/** Each scope as a bit, so a route's scope is checked against a key's with one AND. */
export const SCOPE_BIT: Readonly<Record<KeyScope, number>> = Object.freeze(
  Object.fromEntries(KEY_SCOPES.map((s, i) => [s, 1 << i])) as Record<KeyScope, number>,
);
const ALL_SCOPES = (1 << KEY_SCOPES.length) - 1;
/** A scope every key holds: a question about the key alone, not a route. */
export const ANY_SCOPE = -1;

/** Why a key that exists may not make this request: past its expiry, from elsewhere, or for another route. */
export type KeyRefusal = 'expired' | 'address' | 'scope';

/**
 * A request a key is judged for: the time, the route's scope (a SCOPE_BIT, or ANY_SCOPE) and the
 * client's address, null when the question is about the key alone (is it known and in force?).
 */
export interface KeyRequest {
  readonly scope: number;
  now(): number;
  address(): string | null;
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * A key's restrictions, worked out once per cached entry, so a request checks them in process
 * with no store round trip: a key with none (`open`) costs a request one property read.
 */
export class KeyGate {
  /** No expiry, every scope, any address. */
  readonly open: boolean;
  readonly expiresMs: number;
  /** From when answers carry `X-API-Key-Expires` (Infinity: never). */
  readonly warnFromMs: number;
  /** The expiry as the header writes it. */
  readonly expiresHeader: string;
  private readonly scopes: number;
  private readonly ranges: Range[] | null;

  constructor(key: StoredKey, warningMs: number) {
    this.expiresMs = key.expires_at === null ? Infinity : Date.parse(key.expires_at);
    this.warnFromMs = this.expiresMs - warningMs;
    this.expiresHeader = key.expires_at === null ? '' : new Date(this.expiresMs).toISOString();
    this.scopes = key.scopes.reduce((bits, s) => bits | SCOPE_BIT[s], 0);
    this.ranges = key.allowed_cidrs.length === 0 ? null : key.allowed_cidrs.flatMap(parseRange);
    this.open = this.expiresMs === Infinity && this.scopes === ALL_SCOPES && this.ranges === null;
  }

  /** Why the key may not make `request`; null when it may. The address is asked only of a key with an allowlist. */
  refusal(request: KeyRequest): KeyRefusal | null {
    if (request.now() >= this.expiresMs) return 'expired';
    if (this.ranges !== null) {
      const address = request.address();
      if (address !== null && !this.allows(address)) return 'address';
    }
    if (request.scope !== ANY_SCOPE && (this.scopes & request.scope) === 0) return 'scope';
    return null;
  }

  /** Whether the client address is in the allowlist; an IPv4-mapped IPv6 address is its IPv4 one. */
  allows(address: string): boolean {
    let ip: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      ip = ipaddr.process(address);
    } catch {
      return false;
    }
    for (const range of this.ranges ?? []) if (ip.kind() === range[0].kind() && ip.match(range)) return true;
    return false;
  }
}

/** A stored CIDR (validated when written); one that no longer parses admits nothing. */
function parseRange(cidr: string): Range[] {
  try {
    return [ipaddr.parseCIDR(cidr)];
  } catch {
    return [];
  }
}

// One gate per warning setting for every key without restrictions (most keys): a gate is read,
// never changed, and a cached account is held up to `account_cache.max_entries` times over.
const openGates = new Map<number, KeyGate>();

/** The gate of `key`: the shared one when the key has no restrictions, else its own. */
export function gateOf(key: StoredKey, warningMs: number): KeyGate {
  const gate = new KeyGate(key, warningMs);
  if (!gate.open) return gate;
  const shared = openGates.get(warningMs);
  if (shared !== undefined) return shared;
  openGates.set(warningMs, gate);
  return gate;
}
