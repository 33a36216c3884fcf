import { hashKey, isWellFormedKey } from './keys.js';

/**
 * Remembers the SHA-256 hash of recently seen well-formed keys. Checking the checksum and hashing
 * cost a warm metered request more than all else it computes (about 3 µs where a bare node:http
 * answer costs 14 µs, `npm run bench`). A key maps to one hash forever, so nothing here goes
 * stale. Keys stay in this process's memory only (first in, first out past `max`), like the
 * requests that carry them; they are never stored or logged.
 */
export class KeyHashes {
  private readonly memo = new Map<string, string>();

  constructor(private readonly max: number) {}

  /** The hash of a well-formed key; null for a key no account can have. */
  of(key: string): string | null {
    let hash = this.memo.get(key);
    if (hash !== undefined) return hash;
    if (!isWellFormedKey(key)) return null;
    hash = hashKey(key);
    if (this.memo.size >= this.max) this.memo.delete(this.memo.keys().next().value as string);
    this.memo.set(key, hash);
    return hash;
  }
}
