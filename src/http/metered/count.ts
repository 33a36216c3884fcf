/**
 * The metered request and its count: one store round trip. `MeteredRequest` is made first
 * (index.ts) and every pass takes it alone; here it is also the receiver of the store's reply,
 * on either path, so a warm request makes no other object, no promise and no closure:
 *
 * - warm (the account cached): `admit` judges the entry (quota/account-entry.ts `refusal`) and
 *   `count` hands it to `meter.consumeInto`; on the memory store the answer is written before
 *   `count` returns;
 * - slow (first sight of a key, HEAD, an uncounted 304, an account that `changed`): the meter
 *   loads the account, judges and counts, and its promise feeds the same receiver.
 *
 * Either way the reply goes on to outcome.ts, which answers; or, for a feature that answers
 * itself (the pass-through, `countThen`), to its `then`.
 */
import { performance } from 'node:perf_hooks';
import type { KnownKey } from '../../keys/key-hashes.js';
import type { Snapshot } from '../../prices/snapshot.js';
import { refusal } from '../../quota/account-entry.js';
import type {
  AccountEntry,
  CountedResult,
  DroppedAccount,
  HeldAccount,
  KeyRequest,
  MeterResult,
} from '../../quota/meter.js';
import type { ConsumeReceiver, ConsumeResult, StoredAccount } from '../../store/store.js';
import { clientOf, crashed } from '../answer.js';
import { clientIp } from '../client.js';
import type { Exchange, MeteredBody, MeteredRoute } from '../core-types.js';
import { storeWorked } from '../listener-context.js';
import type { Target } from '../request.js';
import { admitted, answerCounted, answerUnmetered, keyRefused, storeFailed } from './outcome.js';

/**
 * What a feature that writes a counted request's answer itself (the pass-through) is handed: the
 * count, or null when the request is served unmetered (`store.on_error: allow`). Refusals never
 * reach it: they are answered through outcome.ts.
 */
export type CountedThen = (counted: CountedResult | null) => void;

/** A pass of the metered request: true, it goes on to the next; false, it is answered or waits for the store. */
export type Pass = (m: MeteredRequest) => boolean;

type Counted = Extract<ConsumeResult, { kind: 'ok' | 'exhausted' | 'burst' }>;

const NO_BODY: MeteredBody = { contentType: '', head: '', tail: '', withUsage: false, bytes: 0, compressed: null };

/**
 * One metered request, made before its first pass; each pass sets what it found (the key, the
 * body, the ETag, the entry) for the later ones. It is the request the admission rule judges
 * (`KeyRequest`) and the receiver of its count (`ConsumeReceiver`).
 */
export class MeteredRequest implements ConsumeReceiver, KeyRequest {
  key: KnownKey<HeldAccount> | null = null;
  keyHash = '';
  body: MeteredBody = NO_BODY;
  /** The price set the body was prepared from, for its ETag. */
  snapshot: Snapshot | null = null;
  /** The ETag its answer carries (a conditional route, etag.ts), or null. */
  etag: string | null = null;
  /** If-None-Match matched `etag`: the answer is a 304 without a body. */
  notModified = false;
  /** Read the usage without counting it (HEAD, an uncounted 304): the slow path, one store call as a count. */
  peek = false;
  /** The cached entry the warm path counts for. */
  entry: AccountEntry | null = null;
  /** The ledger's day a feature's warm count is counted on, known before the store replies. */
  day = '';
  /** When its store call began, for the store latency metric. */
  storeStart = 0;
  /** What the key's record keeps of an entry the cache dropped, counted from instead of `entry`: its reply brings the account (Meter `reviving`). */
  dropped: DroppedAccount | null = null;
  /** The meter's announcements when a `dropped` count was sent (Meter `revived`). */
  generation = 0;

  constructor(
    readonly x: Exchange,
    /** null: a feature's request (`countThen`), which starts at `admit`. */
    readonly route: MeteredRoute | null,
    readonly target: Target,
    readonly then: CountedThen | null,
  ) {}

  get scope(): number {
    return this.x.route.scope;
  }

  now(): number {
    return this.x.services.clock.now();
  }

  address(): string {
    return clientIp(this.x.req, this.x.core.trustedProxies);
  }

  /** The slow path: the meter loads the account (with `address`: a key not held here is an attempt of it), judges it and counts. */
  slowly(address?: string): void {
    const { meter } = this.x.services;
    this.storeStart = performance.now();
    const pending = this.peek ? meter.peek(this.keyHash, this, address) : meter.consume(this.keyHash, this, address);
    pending.then(
      (result) => this.settled(result),
      (err: unknown) => this.failed(err),
    );
  }

  /** The store's reply to a warm count. */
  consumed(result: ConsumeResult): void {
    try {
      this.storeAnswered();
      switch (result.kind) {
        case 'ok':
        case 'exhausted':
        case 'burst':
          if (this.dropped !== null) this.revived(this.dropped, result.account);
          return this.counted(result);
        case 'inactive':
          return keyRefused(this.x, 'inactive');
        case 'changed':
          // Our copy of the account is out of date: the meter reloads it and decides again.
          this.x.services.meter.forget(this.keyHash, this.key);
          this.dropped = null;
          return this.slowly();
      }
    } catch (err) {
      crashed(this.x, err);
    }
  }

  /** The store could not answer a count, on either path: refused, or served unmetered (outcome.ts `storeFailed`). */
  failed(err: unknown): void {
    try {
      this.x.core.metrics.storeLatency.observe((performance.now() - this.storeStart) / 1000);
      if (!storeFailed(this.x, this.keyHash, err, 'unmetered')) return;
      if (this.then !== null) return this.then(null);
      answerUnmetered(this);
    } catch (e) {
      crashed(this.x, e);
    }
  }

  /** The meter's answer on the slow path: refused (answered in outcome.ts) or counted. */
  private settled(result: MeterResult): void {
    try {
      this.storeAnswered();
      const counted = admitted(this.x, result);
      if (counted === null) return;
      if (this.key !== null) this.x.services.meter.hold(this.key, counted.entry);
      if (this.then !== null) return this.then(counted);
      answerCounted(this, counted.kind, counted.entry, counted.used, counted.burst);
    } catch (err) {
      crashed(this.x, err);
    }
  }

  /** The entry a `dropped` count answers with: the account its reply carried, cached again. */
  private revived(dropped: DroppedAccount, account: StoredAccount | undefined): void {
    const { key } = this;
    if (key === null) throw new Error('a count from a dropped entry without its key');
    this.entry = this.x.services.meter.revived(key, dropped, account, this.generation);
    this.x.account = this.entry;
  }

  private counted(result: Counted): void {
    const { entry, then, day } = this;
    if (entry === null) throw new Error('a warm count without its entry');
    if (then === null) return answerCounted(this, result.kind, entry, result.used, result.burst);
    // Built field by field: a spread of the store's reply cost a pass-through hit 4% of its CPU.
    then(
      result.kind === 'burst'
        ? { kind: 'burst', entry, used: result.used, day, burst: result.burst }
        : { kind: result.kind, entry, used: result.used, day, burst: result.burst },
    );
  }

  private storeAnswered(): void {
    const l = this.x.core;
    l.metrics.storeLatency.observe((performance.now() - this.storeStart) / 1000);
    storeWorked(l);
  }
}

/**
 * The account admits the request: a cached entry is judged here (the one rule, `refusal`) and
 * goes on to `count`; anything else takes the slow path, where the meter judges it by the same rule.
 */
export function admit(m: MeteredRequest): boolean {
  const { x, key } = m;
  const { meter } = x.services;
  const entry = m.peek || key === null ? undefined : meter.warm(key);
  if (entry === undefined) {
    // A key whose account the cache dropped for room counts from that copy and brings it back.
    const dropped = m.peek || key === null ? undefined : meter.dropped(key);
    if (dropped === undefined || refusal(dropped, m) !== null) {
      m.slowly(clientOf(x));
      return false;
    }
    x.account = dropped;
    m.dropped = dropped;
    return true;
  }
  x.account = entry;
  const refused = refusal(entry, m);
  if (refused !== null) {
    keyRefused(x, refused);
    return false;
  }
  m.entry = entry;
  return true;
}

/** The warm count: the store's reply comes to the request itself (`consumed`, `failed`). */
export function count(m: MeteredRequest): boolean {
  const { meter } = m.x.services;
  const entry = m.entry ?? m.dropped;
  if (entry === null) return false;
  m.storeStart = performance.now();
  if (m.dropped !== null) m.generation = meter.reviving(m.dropped);
  // A feature's count knows its day before the reply, which the memory store gives at once.
  if (m.then === null) {
    meter.consumeInto(entry, m);
    return false;
  }
  m.day = meter.today();
  meter.consumeInto(entry, m, m.day);
  return false;
}

/**
 * Counts a request whose answer a feature writes itself (the pass-through): `then` gets the count
 * (or null: served unmetered), and a refusal is answered here. A cached account takes the warm
 * path, so a pass-through cache hit makes no promise for its count.
 */
export function countThen(x: Exchange, key: KnownKey<HeldAccount>, then: CountedThen): void {
  const m = new MeteredRequest(x, null, NO_TARGET, then);
  m.key = key;
  m.keyHash = key.hash;
  if (admit(m)) count(m);
}

const NO_TARGET: Target = { search: '', path: '' };
