/**
 * The pass-through cache: one per gateway process, shared by every account, in front of the
 * origin (the request was authenticated and counted before it gets here). A fresh entry is served
 * without the origin; concurrent misses of one key make one origin request (a flight) that every
 * waiter is answered from; a stale entry is served at once while one background request refreshes
 * it (stale_while_revalidate_s), or while the origin fails (stale_if_error_s).
 */
import type { Agent, IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { ErrorAnswer, ErrorKind } from '../../http/error-kinds.js';
import type { Metrics } from '../../metrics/gateway-metrics.js';
import type { RequestSpan } from '../../telemetry/tracing.js';
import { MAX_JSON_BYTES, usagePrefix, withoutUsage } from '../bodies.js';
import type { ForwardSpec } from '../forward-spec.js';
import { KeyGuard, RefusalLog } from '../key-guard.js';
import { getFromOrigin, type OriginAnswer, OriginFailure, type UpstreamConfig } from '../origin.js';
import type { OriginProxy } from '../proxy.js';
import { CacheEntries, type CacheEntry, entrySize, ownText } from './entries.js';
import { cacheKeyOf, freshness, normalPath, REPLAYED, shareable } from './policy.js';
import { fixedHeaders, type ReplyParts, replyAnswer, replyEntry, replyFailure, type XCache } from './reply.js';

/** What the pass-through route hands an admitted request to. */
export interface PassThrough {
  /** Resolves with the status written (0: nothing was, or the origin failed a streamed answer; not counted). */
  forward(req: IncomingMessage, res: ServerResponse, spec: ForwardSpec): Promise<number>;
}

/** What one origin request for a key came to. */
type Outcome =
  /** Stored (or refreshed by a 304): every waiter is answered from the entry. */
  | { kind: 'entry'; entry: CacheEntry; xCache: XCache }
  /** Read whole but not stored; `shared` when every waiter may have it (an error, a public answer too large to keep). */
  | { kind: 'answer'; answer: OriginAnswer; shared: boolean }
  /** No answer, one too large to read whole, or one refused: it carried the service key or could not be read to tell. */
  | { kind: 'failed'; reason: 'timeout' | 'unreachable' | 'too_large' | 'key' | 'unreadable' };

const CACHED_METHODS = new Set(['GET', 'HEAD']);

/** The parts of a PassThroughCache: its constructor's options. */
export interface PassThroughCacheOptions {
  cfg: UpstreamConfig;
  agent: Agent;
  proxy: OriginProxy;
  errors: Record<ErrorKind, ErrorAnswer>;
  metrics: Metrics;
  log: Logger;
  now?: () => number;
}

export class PassThroughCache implements PassThrough {
  private readonly entries: CacheEntries;
  private readonly flights = new Map<string, Promise<Outcome>>();
  private readonly guard: KeyGuard;
  private readonly refusals: RefusalLog;
  private readonly parts: ReplyParts;
  private readonly c: UpstreamConfig['cache'];
  private readonly series = new Map<XCache, { inc(): void }>();
  /** Moved on by every purge: a flight that began before one does not store its answer. */
  private generation = 0;

  private readonly cfg: UpstreamConfig;
  private readonly agent: Agent;
  private readonly proxy: OriginProxy;
  private readonly metrics: Metrics;
  private readonly log: Logger;
  private readonly now: () => number;

  constructor(o: PassThroughCacheOptions) {
    this.cfg = o.cfg;
    this.agent = o.agent;
    this.proxy = o.proxy;
    this.metrics = o.metrics;
    this.log = o.log;
    this.now = o.now ?? Date.now;
    const { cfg, errors, metrics, log } = o;
    this.c = cfg.cache;
    this.entries = new CacheEntries(Math.max(1, this.c.max_bytes), this.c.max_entry_bytes);
    this.guard = new KeyGuard(cfg.api_key);
    this.refusals = new RefusalLog(log, this.now);
    this.parts = { errors, log };
    metrics.cacheHeld(() => ({ bytes: this.entries.bytes, entries: this.entries.size }));
  }

  async forward(req: IncomingMessage, res: ServerResponse, spec: ForwardSpec): Promise<number> {
    if (this.c.max_bytes === 0 || !CACHED_METHODS.has(req.method ?? '')) return this.bypass(req, res, spec);
    const key = cacheKeyOf(spec.path, spec.search);
    const head = req.method === 'HEAD';
    const entry = this.entries.get(key);
    if (entry) {
      const now = this.now();
      const pastMs = now - entry.storedAt - entry.freshMs;
      if (pastMs < 0) return this.fromEntry(res, spec, entry, 'HIT', head);
      if (!entry.mustRevalidate && pastMs < this.c.stale_while_revalidate_s * 1000) {
        if (!this.flights.has(key)) void this.flight(key, spec.route, entry, spec.span);
        return this.fromEntry(res, spec, entry, 'STALE', head);
      }
    }
    // A HEAD does not start an origin request of its own for the cache: it goes through as before.
    if (head) return this.bypass(req, res, spec);
    const joined = this.flights.get(key);
    if (joined) this.metrics.cacheCoalesced.inc();
    const outcome = await (joined ?? this.flight(key, spec.route, entry, spec.span));
    return this.answer(req, res, spec, key, outcome, joined !== undefined);
  }

  /** Empties the cache, or one path's entries (a prefix when it ends in `*`); returns how many went. */
  purge(path: string | null): number {
    this.generation++;
    const n = this.entries.purge(path === null ? null : normalPath(path));
    this.log.info({ path, entries: n }, 'pass-through cache purged');
    return n;
  }

  private async answer(
    req: IncomingMessage,
    res: ServerResponse,
    spec: ForwardSpec,
    key: string,
    o: Outcome,
    waiter: boolean,
  ): Promise<number> {
    if (o.kind === 'entry') return this.fromEntry(res, spec, o.entry, o.xCache, false);
    const failing = o.kind === 'failed' ? o.reason !== 'too_large' : o.answer.status >= 500;
    const stale = failing ? this.staleIfError(key) : undefined;
    if (stale) return this.fromEntry(res, spec, stale, 'STALE', false);
    if (o.kind === 'failed') {
      if (o.reason === 'too_large') return this.bypass(req, res, spec);
      return this.done(res, spec, o.reason === 'timeout' ? 'upstream_timeout' : 'upstream_unavailable');
    }
    // An answer tied to whoever asked (private, a cookie, Vary) is the leader's alone.
    if (waiter && !o.shared)
      return this.answer(req, res, spec, key, await this.fetch(key, spec.route, undefined, spec.span), false);
    if (res.destroyed) return this.left(spec);
    const success = replyAnswer(res, spec, o.answer, 'BYPASS', this.parts);
    this.metrics.cacheAnswers.labels('bypass').inc();
    if (!success) spec.onFailure();
    return o.answer.status === 401 ? this.parts.errors.upstream_unavailable.status : o.answer.status;
  }

  /** The answers counter's series for an X-Cache value, bound at its first use (a hit looks up no labels). */
  private answered(xCache: XCache): { inc(): void } {
    let series = this.series.get(xCache);
    if (series === undefined) {
      series = this.metrics.cacheAnswers.labels(xCache.toLowerCase());
      this.series.set(xCache, series);
    }
    return series;
  }

  /** An entry within stale_if_error_s past its freshness, if the key has one. */
  private staleIfError(key: string): CacheEntry | undefined {
    const e = this.entries.get(key);
    if (!e || e.mustRevalidate) return undefined;
    return this.now() - e.storedAt - e.freshMs < this.c.stale_if_error_s * 1000 ? e : undefined;
  }

  private fromEntry(res: ServerResponse, spec: ForwardSpec, e: CacheEntry, xCache: XCache, head: boolean): number {
    if (res.destroyed) return this.left(spec);
    replyEntry(res, spec, e, xCache, this.now(), head);
    this.answered(xCache).inc();
    return 200;
  }

  private done(res: ServerResponse, spec: ForwardSpec, kind: ErrorKind): number {
    if (res.destroyed) return this.left(spec);
    replyFailure(res, spec, kind, 'BYPASS', this.parts);
    spec.onFailure();
    return this.parts.errors[kind].status;
  }

  /** The client left while it waited: nothing written, and the request given back. */
  private left(spec: ForwardSpec): number {
    spec.onFailure();
    return 0;
  }

  private bypass(req: IncomingMessage, res: ServerResponse, spec: ForwardSpec): Promise<number> {
    this.metrics.cacheAnswers.labels('bypass').inc();
    return this.proxy.forward(req, res, {
      // Named one by one, not spread: a spec may keep `refunded` and `onFailure` on its prototype.
      route: spec.route,
      path: spec.path,
      search: spec.search,
      usage: spec.usage,
      headers: [...spec.headers, 'X-Cache', 'BYPASS'],
      refunded: [...spec.refunded, 'X-Cache', 'BYPASS'],
      onFailure: () => spec.onFailure(),
      requestIdJson: spec.requestIdJson,
      span: spec.span,
    });
  }

  /** One origin request for `key`, shared by whoever asks for the key until it ends. */
  private flight(
    key: string,
    route: string,
    entry: CacheEntry | undefined,
    span: RequestSpan | null,
  ): Promise<Outcome> {
    const p = this.fetch(key, route, entry, span).finally(() => this.flights.delete(key));
    this.flights.set(key, p);
    return p;
  }

  /** `span`: the request that asked (its span is the parent of the origin try's). */
  private async fetch(
    key: string,
    route: string,
    entry: CacheEntry | undefined,
    span: RequestSpan | null,
  ): Promise<Outcome> {
    const generation = this.generation;
    const started = performance.now();
    const validators: Record<string, string> = {};
    if (entry?.etag) validators['if-none-match'] = entry.etag;
    if (entry?.lastModified) validators['if-modified-since'] = entry.lastModified;
    let a: OriginAnswer;
    try {
      // The key itself is what is asked for: a stored body is the origin's answer to its key.
      a = await getFromOrigin(
        this.cfg,
        this.agent,
        this.target(key),
        validators,
        Math.max(MAX_JSON_BYTES, this.c.max_entry_bytes),
        span,
      );
    } catch (err) {
      const reason = err instanceof OriginFailure ? err.reason : 'unreachable';
      this.metrics.observeUpstream(route, reason, (performance.now() - started) / 1000);
      return { kind: 'failed', reason };
    }
    this.metrics.observeUpstream(route, String(a.status), (performance.now() - started) / 1000);
    // Checked once, here, for every waiter and every later hit: nothing of an answer that carries
    // the service key is stored or passed on.
    const checked = this.guard.inAnswer(a.status, a.headers, a.body);
    if (checked !== 'clean') {
      this.refusals.note(route, a.status, checked);
      return { kind: 'failed', reason: checked };
    }
    const received = this.now();
    if (a.status === 304 && entry) {
      const fresh =
        a.headers['cache-control'] === undefined ? { ...entry, ageMs: 0 } : freshness(a.headers, this.ttl(route));
      const refreshed: CacheEntry = {
        ...entry,
        storedAt: received - (fresh?.ageMs ?? 0),
        freshMs: fresh?.freshMs ?? 0,
      };
      if (generation === this.generation && fresh) this.entries.set(key, refreshed);
      return { kind: 'entry', entry: refreshed, xCache: 'MISS' };
    }
    const kind = shareable(a.status, a.headers);
    const fresh = kind === null ? null : freshness(a.headers, this.ttl(route));
    if (kind === null || fresh === null) return { kind: 'answer', answer: a, shared: a.status >= 400 };
    const body = kind === 'json' ? withoutUsage(a.body, a.headers['content-encoding']) : a.body.toString('utf8');
    if (body === null) return { kind: 'answer', answer: a, shared: true };
    const headers: Record<string, string> = {};
    for (const name of REPLAYED) {
      const v = a.headers[name];
      if (typeof v === 'string') headers[name] = v;
    }
    const e: CacheEntry = {
      path: key.slice(0, key.indexOf('?')),
      kind,
      ...ownText(kind === 'json' ? usagePrefix(body) : body),
      headers,
      fixedHeaders: fixedHeaders(headers),
      storedAt: received - fresh.ageMs,
      freshMs: fresh.freshMs,
      mustRevalidate: fresh.mustRevalidate,
      etag: typeof a.headers.etag === 'string' ? a.headers.etag : null,
      lastModified: a.headers['last-modified'] ?? null,
    };
    if (entrySize(key, e) > this.c.max_entry_bytes) return { kind: 'answer', answer: a, shared: true };
    // Purged while it was asked for: the waiters get it, the cache does not keep it.
    if (generation === this.generation) this.entries.set(key, e);
    return { kind: 'entry', entry: e, xCache: 'MISS' };
  }

  /** The origin's path and query for a key: the key with the service key added. */
  private target(key: string): string {
    const q = key.indexOf('?');
    const params = new URLSearchParams(key.slice(q + 1));
    params.append('api_key', this.cfg.api_key);
    return `${key.slice(0, q)}?${params}`;
  }

  private ttl(route: string): number {
    return this.c.paths[route]?.default_ttl_s ?? this.c.default_ttl_s;
  }
}
