/**
 * The store's reply to a count (count.ts), on either path: its latency is observed, a store
 * outage is over or noted, and the meter's result goes on to outcome.ts, which answers. An
 * account that `changed` since it was cached is reloaded and counted again from here.
 */
import { performance } from 'node:perf_hooks';
import type { AccountEntry, MeterResult } from '../quota/meter.js';
import type { ConsumeReceiver, ConsumeResult } from '../store/store.js';
import { crashed } from './answer.js';
import type { Exchange, ListenerContext, MeteredBody } from './core-types.js';
import { keyCheck } from './key-check.js';
import { storeWorked } from './listener-context.js';
import { admitted, answerCounted, answerUnmetered, keyRefused, type MeteredRequest, storeFailed } from './outcome.js';

/** The receiver of a warm count, and the request's `MeteredRequest`: the store's reply for a cached account. */
export class WarmCount implements MeteredRequest, ConsumeReceiver {
  private readonly storeStart = performance.now();

  constructor(
    readonly x: Exchange,
    readonly keyHash: string,
    readonly body: MeteredBody,
    readonly etag: string | null,
    readonly notModified: boolean,
    private readonly entry: AccountEntry,
  ) {}

  consumed(result: ConsumeResult): void {
    try {
      const l = this.x.listener;
      storeAnswered(l, this.storeStart);
      switch (result.kind) {
        case 'ok':
        case 'exhausted':
        case 'burst':
          return answerCounted(this, result.kind, this.entry, result.used, result.burst);
        case 'inactive':
          return keyRefused(this.x, 'inactive');
        case 'changed':
          // Our copy of the account is out of date: the meter reloads it and decides again.
          l.meter.forget(this.keyHash);
          return countSlowly(this, l.meter.consume(this.keyHash, keyCheck(this.x)));
      }
    } catch (err) {
      crashed(this.x, err);
    }
  }

  failed(err: Error): void {
    try {
      storeUnanswered(this, this.storeStart, err);
    } catch (e) {
      crashed(this.x, e);
    }
  }
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
