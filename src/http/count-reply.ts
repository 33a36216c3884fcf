/**
 * The store's reply to a count (count.ts), on either path: its latency is observed, a store
 * outage is over or noted, and the meter's result goes on to outcome.ts, which answers. An
 * account that `changed` since it was cached is reloaded and counted again from here.
 */
import { performance } from 'node:perf_hooks';
import type { AccountEntry, CountedResult, MeterResult } from '../quota/meter.js';
import type { ConsumeReceiver, ConsumeResult } from '../store/store.js';
import { crashed } from './answer.js';
import type { Exchange, ListenerContext, MeteredBody } from './core-types.js';
import { keyCheck } from './key-check.js';
import { storeWorked } from './listener-context.js';
import { admitted, answerCounted, answerUnmetered, keyRefused, type MeteredRequest, storeFailed } from './outcome.js';

type Counted = Extract<ConsumeResult, { kind: 'ok' | 'exhausted' | 'burst' }>;

/**
 * The store's reply to a warm count (count.ts): latency, an inactive account and one that
 * `changed` since it was cached are handled alike for every kind of request; what a counted one
 * gets, how it is counted again and what it gets unmetered is the subclass's.
 */
abstract class WarmReply implements ConsumeReceiver {
  private readonly storeStart = performance.now();

  constructor(
    readonly x: Exchange,
    readonly keyHash: string,
    protected readonly entry: AccountEntry,
  ) {}

  protected abstract counted(result: Counted): void;
  /** Counted again the slow way, which reloads the account. */
  protected abstract again(): void;
  /** The store could not answer, and `storeFailed` says the request goes on uncounted. */
  protected abstract unmetered(): void;

  consumed(result: ConsumeResult): void {
    try {
      const l = this.x.listener;
      storeAnswered(l, this.storeStart);
      switch (result.kind) {
        case 'ok':
        case 'exhausted':
        case 'burst':
          return this.counted(result);
        case 'inactive':
          return keyRefused(this.x, 'inactive');
        case 'changed':
          // Our copy of the account is out of date: the meter reloads it and decides again.
          l.meter.forget(this.keyHash);
          return this.again();
      }
    } catch (err) {
      crashed(this.x, err);
    }
  }

  failed(err: Error): void {
    try {
      this.x.listener.metrics.storeLatency.observe((performance.now() - this.storeStart) / 1000);
      if (storeFailed(this.x, this.keyHash, err, 'unmetered')) this.unmetered();
    } catch (e) {
      crashed(this.x, e);
    }
  }
}

/** The receiver of a metered route's warm count, and the request's `MeteredRequest`. */
export class WarmCount extends WarmReply implements MeteredRequest {
  constructor(
    x: Exchange,
    keyHash: string,
    readonly body: MeteredBody,
    readonly etag: string | null,
    readonly notModified: boolean,
    entry: AccountEntry,
  ) {
    super(x, keyHash, entry);
  }

  protected counted(result: Counted): void {
    answerCounted(this, result.kind, this.entry, result.used, result.burst);
  }

  protected again(): void {
    countSlowly(this, this.x.listener.meter.consume(this.keyHash, keyCheck(this.x)));
  }

  protected unmetered(): void {
    answerUnmetered(this);
  }
}

/**
 * What a feature that writes a counted request's answer itself (the pass-through) is handed: the
 * count, or null when the request is served unmetered (`store.on_error: allow`). Refusals never
 * reach it: they are answered through outcome.ts.
 */
export type CountedThen = (counted: CountedResult | null) => void;

/** The receiver of a warm count for such a feature (count.ts `countThen`). */
export class FeatureCount extends WarmReply {
  constructor(
    x: Exchange,
    keyHash: string,
    entry: AccountEntry,
    private readonly day: string,
    private readonly then: CountedThen,
  ) {
    super(x, keyHash, entry);
  }

  protected counted(result: Counted): void {
    const { entry, day } = this;
    // Built field by field: a spread of the store's reply cost a pass-through hit 4% of its CPU.
    this.then(
      result.kind === 'burst'
        ? { kind: 'burst', entry, used: result.used, day, burst: result.burst }
        : { kind: result.kind, entry, used: result.used, day, burst: result.burst },
    );
  }

  protected again(): void {
    countSlowlyThen(this.x, this.keyHash, this.then);
  }

  protected unmetered(): void {
    this.then(null);
  }
}

/**
 * The slow path of `countThen` (count.ts): the meter loads the account and counts. With the
 * client's `address`, a key not held here is an attempt of that address (Meter.consume).
 */
export function countSlowlyThen(x: Exchange, keyHash: string, then: CountedThen, address?: string): void {
  const storeStart = performance.now();
  x.listener.meter
    .consume(keyHash, keyCheck(x), address)
    .then(
      (result) => {
        storeAnswered(x.listener, storeStart);
        const counted = admitted(x, result);
        if (counted !== null) then(counted);
      },
      (err: unknown) => {
        x.listener.metrics.storeLatency.observe((performance.now() - storeStart) / 1000);
        if (storeFailed(x, keyHash, err, 'unmetered')) then(null);
      },
    )
    .catch((err: unknown) => crashed(x, err));
}

/** The slow path: the meter loads the account (or reads usage, for HEAD) and counts. */
export function countSlowly(m: MeteredRequest, pending: Promise<MeterResult>): void {
  const storeStart = performance.now();
  pending
    .then(
      (result) => {
        storeAnswered(m.x.listener, storeStart);
        const counted = admitted(m.x, result);
        if (counted !== null) answerCounted(m, counted.kind, counted.entry, counted.used, counted.burst);
      },
      (err: unknown) => storeUnanswered(m, storeStart, err),
    )
    .catch((err: unknown) => crashed(m.x, err));
}

function storeAnswered(l: ListenerContext, storeStart: number): void {
  l.metrics.storeLatency.observe((performance.now() - storeStart) / 1000);
  storeWorked(l);
}

/** A count the store could not answer: refused, or served unmetered (outcome.ts). */
function storeUnanswered(m: MeteredRequest, storeStart: number, err: unknown): void {
  m.x.listener.metrics.storeLatency.observe((performance.now() - storeStart) / 1000);
  if (storeFailed(m.x, m.keyHash, err, 'unmetered')) answerUnmetered(m);
}
