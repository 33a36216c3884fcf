import { randomUUID } from 'node:crypto';
import type { Agent } from 'node:http';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Metrics } from '../metrics/gateway-metrics.js';
import type { PriceBook } from '../prices/book.js';
import { type PriceSet, priceSetDocument, sameSet } from '../prices/price-set-schema.js';
import type { CoordinationStore } from '../store/store.js';
import { clientCalls } from '../telemetry/calls.js';
import { getFromOrigin, OriginFailure, type UpstreamConfig } from './origin.js';

const LEASE = 'upstream-poll';
const NOTE = 'upstream-status';
const NOTE_TTL_MS = 1000;

/** What one poll came to: the label of `fuel_gateway_upstream_polls_total`. */
type PollResult =
  | 'changed'
  | 'unchanged'
  | 'not_modified'
  | 'timeout'
  | 'unreachable'
  | 'too_large'
  | 'unauthorized'
  | 'bad_status'
  | 'not_json'
  | 'invalid'
  | 'store_error';

const SUCCESS: ReadonlySet<PollResult> = new Set(['changed', 'unchanged', 'not_modified']);

/** The poller's state as `/readyz` reports it, shared through the store so every instance can tell. */
export interface UpstreamStatus {
  /** waiting: no good poll yet; ok: the last poll succeeded; failing: it did not (see `reason`). */
  state: 'waiting' | 'ok' | 'failing';
  reason: PollResult | null;
  last_success_ms: number | null;
  failures: number;
}

// The origin's full current envelope; its `usage` (the gateway's own at the origin) is dropped.
const currentAnswer = z.object({
  success: z.literal(true),
  source: z.string(),
  effective_date: z.string(),
  updated_at: z.string(),
  data: z.object({ coastal: z.unknown(), inland: z.unknown() }),
});

/** The parts of an UpstreamPoller: its constructor's options. */
export interface UpstreamPollerOptions {
  cfg: UpstreamConfig;
  agent: Agent;
  coordination: CoordinationStore;
  book: PriceBook;
  metrics: Metrics;
  log: Logger;
  now?: () => number;
}

/**
 * Keeps the origin's current price set in the store. One instance of a deployment polls: it
 * holds a lease in the store, renewed every half interval and lasting one and a half, so when
 * it dies another takes over within about two intervals. The others follow the store's price
 * announcements like any published set. Polls run one at a time; after a failure the next one
 * backs off exponentially, and the last good set keeps being served.
 */
export class UpstreamPoller {
  private readonly holder = randomUUID();
  /** The origin as logged: never userinfo a URL might carry. */
  private readonly where: string;
  private holding = false;
  private inFlight = false;
  private closed = false;
  private leaseTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private status: UpstreamStatus = { state: 'waiting', reason: null, last_success_ms: null, failures: 0 };
  private validators: { etag?: string; lastModified?: string } = {};
  /** The last good set from the origin: a 304 means it still holds. */
  private last: PriceSet | null = null;
  private shared: { at: number; status: UpstreamStatus | null } | null = null;

  private readonly cfg: UpstreamConfig;
  private readonly agent: Agent;
  private readonly coordination: CoordinationStore;
  private readonly book: PriceBook;
  private readonly metrics: Metrics;
  private readonly log: Logger;
  private readonly now: () => number;

  constructor(o: UpstreamPollerOptions) {
    this.cfg = o.cfg;
    this.agent = o.agent;
    this.coordination = o.coordination;
    this.book = o.book;
    this.metrics = o.metrics;
    this.log = o.log;
    this.now = o.now ?? Date.now;
    const { cfg } = o;
    const url = new URL(cfg.url);
    this.where = url.origin + url.pathname;
  }

  start(): void {
    void this.renewLease();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.leaseTimer);
    clearTimeout(this.pollTimer);
    if (this.holding) await this.coordination.releaseLease(LEASE, this.holder).catch(() => undefined);
  }

  /** The poller's status: this instance's own when it polls, else the poller's as the store has it. */
  async view(): Promise<{ role: 'poller' | 'follower'; status: UpstreamStatus | null }> {
    if (this.holding) return { role: 'poller', status: this.status };
    const now = this.now();
    if (!this.shared || now - this.shared.at >= NOTE_TTL_MS) {
      const text = await this.coordination.getNote(NOTE).catch(() => null);
      this.shared = { at: now, status: parseStatus(text) };
    }
    return { role: 'follower', status: this.shared.status };
  }

  private async renewLease(): Promise<void> {
    const interval = this.cfg.poll_interval_ms;
    // Without the store nothing could be published anyway: not holding is the safe answer.
    const held = await this.coordination.lease(LEASE, this.holder, Math.ceil(interval * 1.5)).catch(() => false);
    if (this.closed) return;
    if (held !== this.holding) {
      this.holding = held;
      this.log.info(
        { upstream: this.where },
        held
          ? 'this instance polls the origin'
          : 'stopped polling the origin (another instance holds the lease, or the store is unreachable)',
      );
      if (held) this.schedule(0);
      else clearTimeout(this.pollTimer);
    }
    this.leaseTimer = setTimeout(() => void this.renewLease(), Math.ceil(interval / 2));
  }

  private schedule(ms: number): void {
    clearTimeout(this.pollTimer);
    if (!this.inFlight) this.pollTimer = setTimeout(() => void this.pollOnce(), ms);
  }

  private async pollOnce(): Promise<void> {
    if (!this.holding || this.closed || this.inFlight) return;
    this.inFlight = true;
    const result = await this.poll();
    this.inFlight = false;
    if (this.closed) return;
    this.record(result);
    if (this.holding) this.schedule(SUCCESS.has(result) ? this.cfg.poll_interval_ms : this.backoff());
  }

  /** After n failures in a row: 1 s, 2 s, 4 s … up to one interval before the first good poll, ten after. */
  private backoff(): number {
    const interval = this.cfg.poll_interval_ms;
    const cap = this.status.last_success_ms === null ? interval : 10 * interval;
    return Math.min(Math.min(1000, interval) * 2 ** (this.status.failures - 1), cap);
  }

  private record(result: PollResult): void {
    this.metrics.upstreamPolls.labels(result).inc();
    const ok = SUCCESS.has(result);
    const before = this.status;
    this.status = {
      state: ok ? 'ok' : before.last_success_ms === null ? 'waiting' : 'failing',
      reason: ok ? null : result,
      last_success_ms: ok ? this.now() : before.last_success_ms,
      failures: ok ? 0 : before.failures + 1,
    };
    if (before.state !== this.status.state || before.reason !== this.status.reason) {
      const line = { upstream: this.where, state: this.status.state, reason: this.status.reason ?? undefined };
      if (ok) this.log.info(line, 'origin polled successfully');
      else this.log.warn(line, 'polling the origin failed; serving the last good prices');
    }
    void this.coordination.putNote(NOTE, JSON.stringify(this.status)).catch(() => undefined);
  }

  /** One poll: fetch, validate, and publish the set when it differs from the stored one. */
  private async poll(): Promise<PollResult> {
    const headers: Record<string, string> = {};
    if (this.last && this.validators.etag) headers['if-none-match'] = this.validators.etag;
    if (this.last && this.validators.lastModified) headers['if-modified-since'] = this.validators.lastModified;
    const conditional = Object.keys(headers).length > 0;
    let set: PriceSet;
    let result: PollResult = 'unchanged';
    try {
      // Traces on: a poll is a CLIENT span of its own trace, its traceparent sent to the origin.
      const traced = clientCalls.poll;
      const answer = await getFromOrigin(
        this.cfg,
        this.agent,
        `/fuel-api/api/current.php?api_key=${encodeURIComponent(this.cfg.api_key)}`,
        headers,
        undefined,
        traced === null ? null : { originTry: traced },
      );
      if (answer.status === 304 && conditional && this.last) {
        set = this.last;
        result = 'not_modified';
      } else if (answer.status === 401 || answer.status === 403) {
        return 'unauthorized';
      } else if (answer.status !== 200) {
        return 'bad_status';
      } else {
        this.validators = {};
        const parsed = parseCurrent(answer.body);
        if (typeof parsed === 'string') return parsed;
        set = parsed;
        this.last = set;
        const { etag, 'last-modified': lastModified } = answer.headers;
        this.validators = { ...(etag && { etag }), ...(lastModified && { lastModified }) };
      }
    } catch (err) {
      return err instanceof OriginFailure ? err.reason : 'unreachable';
    }
    const stored = this.book.find(set.effective_date);
    if (stored && sameSet(stored, set)) return result;
    try {
      await this.book.publish(set);
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, "cannot store the origin's price set");
      return 'store_error';
    }
    this.log.info({ effective_date: set.effective_date }, "published the origin's price set");
    return 'changed';
  }
}

/** The origin's current answer as a stored price set, or why it is not one. */
function parseCurrent(body: Buffer): PriceSet | 'not_json' | 'invalid' {
  let raw: unknown;
  try {
    raw = JSON.parse(body.toString('utf8'));
  } catch {
    return 'not_json';
  }
  const envelope = currentAnswer.safeParse(raw);
  if (!envelope.success) return 'invalid';
  const { source, effective_date, updated_at, data } = envelope.data;
  const doc = priceSetDocument.safeParse({
    effective_date,
    updated_at,
    source,
    coastal: data.coastal,
    inland: data.inland,
  });
  if (!doc.success) return 'invalid';
  return { ...doc.data, updated_at, origin: 'upstream' };
}

function parseStatus(text: string | null): UpstreamStatus | null {
  try {
    return text === null ? null : (JSON.parse(text) as UpstreamStatus);
  } catch {
    return null;
  }
}
