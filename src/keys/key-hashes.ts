import { isWellFormedKey } from '../key-format.js';
import { hashKey } from './keys.js';

/** What the process remembers of a key it has seen: its hash, and what a request last found for it. */
export interface KnownKey<T> {
  hash: string;
  /** Set and checked by the owner of T (the meter's account entry), so a warm request needs this one lookup. */
  cached: T | null;
}

/**
 * Remembers the SHA-256 hash of recently seen well-formed keys. Checking the checksum and hashing
 * cost a warm metered request more than all else it computes (docs/performance.md). A key maps to
 * one hash forever, so nothing here goes stale. Keys stay in this process's memory only (first in,
 * first out past `max`), like the requests that carry them; they are never stored or logged.
 */
export class KeyHashes<T> {
  private readonly memo = new Map<string, KnownKey<T>>();

  constructor(private readonly max: number) {}

  /** The record of a key seen before, without checking it: only well-formed keys are remembered. */
  seen(key: string): KnownKey<T> | undefined {
    return this.memo.get(key);
  }

  /** The record of a well-formed key; null for a key no account can have. */
  of(key: string): KnownKey<T> | null {
    let known = this.memo.get(key);
    if (known !== undefined) return known;
    if (!isWellFormedKey(key)) return null;
    known = { hash: hashKey(key), cached: null };
    if (this.memo.size >= this.max) this.memo.delete(this.memo.keys().next().value as string);
    this.memo.set(ownCopy(key), known);
    return known;
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
