/**
 * Conditional requests (RFC 9110 §13.1.2, §8.8.3): the weak ETag of what the gateway serves and
 * the If-None-Match check. One ETag names the served price set together with the deployment's
 * fixed content (the API document, built from the config, and the release): the current
 * endpoints, the page and the API document all carry it. It comes from content alone, never
 * from process state, so every gateway serving the same prices with the same release and config
 * sends the same one, and it changes whenever the served prices do (or a restart changes the
 * document or the release).
 */
import { createHash } from 'node:crypto';
import type { Snapshot } from '../prices/snapshot.js';

const DAY_MS = 86_400_000;

/** A snapshot's two tags: before and after its prices turn stale (the page then says so). */
interface Tags {
  fresh: string;
  stale: string;
  staleAtMs: number;
}

export class EntityTags {
  private readonly tags = new WeakMap<Snapshot, Tags>();
  private fixed: string | null = null;

  /**
   * `deployment`: a digest of what a restart may change; read at the first use, once every route
   * is known. `maxAgeDays`: prices.max_age_days; past it the page shows a notice, so the tag
   * changes then too (stale as prices/staleness.ts reckons it: more than that many whole days).
   */
  constructor(
    private readonly deployment: () => string,
    private readonly maxAgeDays: number,
  ) {}

  /** The weak ETag of a snapshot at `now`, worked out once per snapshot. */
  of(snap: Snapshot, now: number): string {
    let tags = this.tags.get(snap);
    if (tags === undefined) {
      this.fixed ??= this.deployment();
      const hash = createHash('sha256').update(snap.tag).update('\n').update(this.fixed).digest('base64url');
      const fresh = `W/"${hash.slice(0, 27)}"`;
      const effective = snap.current?.effectiveMs;
      const staleAtMs = effective === undefined ? Number.POSITIVE_INFINITY : effective + (this.maxAgeDays + 1) * DAY_MS;
      tags = { fresh, stale: `W/"${hash.slice(0, 27)}-stale"`, staleAtMs };
      this.tags.set(snap, tags);
    }
    return now < tags.staleAtMs ? tags.fresh : tags.stale;
  }

  /** Whether a tag is one given to stale prices. */
  static stale(tag: string): boolean {
    return tag.endsWith('-stale"');
  }
}

const OWS = (c: number): boolean => c === 0x20 || c === 0x09;
// etagc = %x21 / %x23-7E / obs-text
const ETAGC = (c: number): boolean => c === 0x21 || (c >= 0x23 && c <= 0x7e) || c >= 0x80;

/**
 * Whether an If-None-Match value (repeated fields joined with ", ") matches `etag` by weak
 * comparison: `*`, or a list of entity-tags one of which has the same opaque-tag, `W/` or not.
 * A value that is not valid syntax matches nothing: the full answer is sent.
 */
export function noneMatchHits(value: string, etag: string): boolean {
  if (value === etag) return true;
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  const n = value.length;
  let i = 0;
  let hit = false;
  let items = 0;
  for (;;) {
    // Empty list elements and whitespace around them are allowed (RFC 9110 §5.6.1).
    while (i < n && (OWS(value.charCodeAt(i)) || value.charCodeAt(i) === 0x2c)) i++;
    if (i >= n) break;
    if (value.charCodeAt(i) === 0x2a /* * */) {
      i++;
      while (i < n && OWS(value.charCodeAt(i))) i++;
      // `*` stands alone: with other members the field is invalid.
      return i >= n && items === 0;
    }
    if (value.startsWith('W/', i)) i += 2;
    if (value.charCodeAt(i) !== 0x22) return false;
    const start = i;
    i++;
    while (i < n && ETAGC(value.charCodeAt(i))) i++;
    if (value.charCodeAt(i) !== 0x22) return false;
    i++;
    items++;
    if (!hit && i - start === opaque.length && value.startsWith(opaque, start)) hit = true;
    while (i < n && OWS(value.charCodeAt(i))) i++;
    if (i < n && value.charCodeAt(i) !== 0x2c) return false;
  }
  return hit;
}
