/**
 * The stored answers of the pass-through cache, bounded in bytes by lru-cache's size accounting:
 * the least recently used entries go first when `max_bytes` would be passed.
 */
import { LRUCache } from 'lru-cache';

/** One stored origin answer: a 200 of JSON or CSV, checked to carry nothing of the service key (key-guard.ts). */
export interface CacheEntry {
  /** The request path in normal form (purge by path). */
  path: string;
  kind: 'json' | 'csv';
  /** JSON: the text before the caller's usage (the answer is this, the usage, `}`); CSV: the body. */
  text: string;
  /** The UTF-8 length of `text`. */
  bytes: number;
  /** The origin's headers replayed (policy REPLAYED). */
  headers: Record<string, string>;
  /**
   * The answer's headers that do not change per request, as `writeHead` takes them: the replayed
   * ones, then the pass-through's own (BASE). Built when the entry is stored.
   */
  fixedHeaders: Array<string | number>;
  /** When the origin last gave or confirmed it (ms), less the Age it came with: `Age` counts from here. */
  storedAt: number;
  freshMs: number;
  mustRevalidate: boolean;
  /** The origin's validators, to revalidate with If-None-Match / If-Modified-Since. */
  etag: string | null;
  lastModified: string | null;
}

/**
 * Bytes counted for an entry besides its body: the key, its headers and validators, and what the
 * entry and lru-cache's bookkeeping cost (measured in docs/performance.md; counted generously).
 */
const OVERHEAD = 512;

export function entrySize(key: string, e: CacheEntry): number {
  let size = OVERHEAD + e.bytes + key.length + e.path.length;
  for (const [name, value] of Object.entries(e.headers)) size += name.length + value.length;
  return size + (e.etag?.length ?? 0) + (e.lastModified?.length ?? 0);
}

/**
 * A body as a flat string of its own: text cut from the origin's answer would otherwise keep the
 * whole answer alive, outside the size accounting. A string body goes out in one write with the
 * headers, where a Buffer takes a second (writev).
 */
export function ownText(source: string): { text: string; bytes: number } {
  const buf = Buffer.from(source, 'utf8');
  return { text: buf.toString('utf8'), bytes: buf.length };
}

export class CacheEntries {
  private readonly lru: LRUCache<string, CacheEntry>;

  constructor(maxBytes: number, maxEntryBytes: number) {
    this.lru = new LRUCache<string, CacheEntry>({
      maxSize: maxBytes,
      maxEntrySize: maxEntryBytes,
      sizeCalculation: (e, key) => entrySize(key, e),
    });
  }

  get(key: string): CacheEntry | undefined {
    return this.lru.get(key);
  }

  /** Stores `e`; false when it is larger than `max_entry_bytes` (not stored). */
  set(key: string, e: CacheEntry): boolean {
    this.lru.set(key, e);
    return this.lru.has(key);
  }

  delete(key: string): void {
    this.lru.delete(key);
  }

  /** Drops every entry, or those of one path (a `proxy_paths`-style prefix when it ends in `*`); returns how many. */
  purge(path: string | null): number {
    if (path === null) {
      const n = this.lru.size;
      this.lru.clear();
      return n;
    }
    const prefix = path.endsWith('*') ? path.slice(0, -1) : null;
    let n = 0;
    for (const [key, e] of this.lru.entries())
      if (prefix === null ? e.path === path : e.path.startsWith(prefix)) {
        this.lru.delete(key);
        n++;
      }
    return n;
  }

  /** Bytes held, as counted against `max_bytes`. */
  get bytes(): number {
    return this.lru.calculatedSize;
  }

  get size(): number {
    return this.lru.size;
  }
}
