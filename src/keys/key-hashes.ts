import { isWellFormedKey } from '../key-format.js';
import { hashKey } from './key-generator.js';

/** What the process remembers of a key it has seen: its hash, and what a request last found for it. */
export interface KnownKey<T> {
  hash: string;
  /** Set and checked by the owner of T (the meter's account entry), so a warm request needs this one lookup. */
  cached: T | null;
}

/**
 * Remembers the SHA-256 hash of recently seen well-formed keys. Checking the checksum and hashing
 * cost a warm metered request more than all else it computes (docs/performance.md). A key maps to
 * one hash forever, so nothing here goes stale. Keys stay in this process's memory only, like the
 * requests that carry them; they are never stored or logged.
 *
 * Two generations of at most `max / 2` keys each: new keys go into the young one, and when it is
 * full the old one is dropped whole and the young one takes its place; a key found in the old one
 * moves back to the young. Evicting one key at a time from the front of a Map (first in, first
 * out) made every eviction step over the holes the earlier ones left, so a scan of distinct
 * made-up keys cost more per key the longer it ran (docs/performance.md).
 */
export class KeyHashes<T> {
  private young = new Map<string, KnownKey<T>>();
  private old = new Map<string, KnownKey<T>>();
  private readonly half: number;

  constructor(max: number) {
    this.half = Math.max(1, Math.floor(max / 2));
  }

  /** The record of a key seen before, without checking it: only well-formed keys are remembered. */
  seen(key: string): KnownKey<T> | undefined {
    const known = this.young.get(key);
    if (known !== undefined) return known;
    const aging = this.old.get(key);
    if (aging !== undefined) this.keep(ownCopy(key), aging);
    return aging;
  }

  /** The record of a well-formed key; null for a key no account can have. */
  of(key: string): KnownKey<T> | null {
    const known = this.seen(key);
    if (known !== undefined) return known;
    if (!isWellFormedKey(key)) return null;
    const fresh: KnownKey<T> = { hash: hashKey(key), cached: null };
    this.keep(ownCopy(key), fresh);
    return fresh;
  }

  private keep(key: string, known: KnownKey<T>): void {
    if (this.young.size >= this.half) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, known);
  }
}

/**
 * The key as a string of its own. A key read from a request is a slice of the request's URL, and V8
 * keeps the whole of that text alive as long as the slice: remembering it would hold up to
 * `max_header_bytes` per key (a flood of made-up well-formed keys padded to the header limit grew a
 * gateway by far more than the keys: docs/performance.md). Keys are ASCII (`isWellFormedKey`), so
 * latin1 is exact.
 */
function ownCopy(key: string): string {
  return Buffer.from(key, 'latin1').toString('latin1');
}
