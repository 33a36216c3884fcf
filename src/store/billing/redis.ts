import type { Result } from 'ioredis';
import { GatewayError } from '../../failures.js';
import type { RedisBackend } from '../redis/backend.js';
import {
  type Cursor,
  emptyCursor,
  settled,
  withDeferred,
  withFailed,
  withGrowth,
  withoutEvent,
  withRetried,
} from './cursor.js';
import type { BillingEvent, BillingStore, PeriodCounts } from './interface.js';
import { CURSOR_CAS } from './lua.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    fpgCursorCas(key: string, expected: string, next: string, ttlMs: number): Result<number, Context>;
  }
}

// A cursor written by two gateways at once: the loser reads again. More than this means
// something keeps writing it, which no exporter does.
const CAS_TRIES = 8;

/**
 * The exporters' cursors on Redis. Keys:
 *   fpg:{acct:ID}:billing:EXPORTER  the cursor (JSON), in the account's slot beside the counters
 *                                   it reads; kept while the ledger is (retention), renewed by
 *                                   every pass of the exporter
 *   fpg:billing:EXPORTER:open       set of account ids with events outstanding (a deleted
 *                                   account's events are still sent); a stale entry is dropped
 *                                   when its cursor is found settled
 *   fpg:billing:EXPORTER:written    how many events the exporter has written, ever: it only grows,
 *                                   so a count below one this process saw means the store went
 *                                   back in time (see `noteWritten`)
 * A change is a compare-and-set of the whole cursor (cursor.ts has the transitions), so the
 * transitions are the memory store's, to the letter.
 */
export class RedisBilling implements BillingStore {
  /** Per exporter, the highest count of events written that this process has seen. */
  private readonly written = new Map<string, number>();

  constructor(
    private readonly b: RedisBackend,
    private readonly ttlMs: number,
  ) {
    b.define({ fpgCursorCas: { lua: CURSOR_CAS, numberOfKeys: 1 } });
  }

  billingPrepare(exporter: string, accountId: string, subject: string, timestampMs: number): Promise<BillingEvent[]> {
    const { b } = this;
    return b.run(async () => {
      const key = this.cursorKey(exporter, accountId);
      for (let i = 0; i < CAS_TRIES; i++) {
        const periods = await b.redis.zrange(b.periodsKey(accountId), '0', '-1');
        // One slot: the cursor and the counters it reads come back in one command on a Cluster too.
        const [raw, ...used] = await b.redis.mget(key, ...periods.map((p) => b.counterKey(accountId, p)));
        const counts: PeriodCounts = [];
        periods.forEach((p, j) => {
          if (used[j] != null) counts.push([p, Number(used[j])]);
        });
        const cursor = decode(raw ?? null);
        const next = withGrowth(cursor, counts, exporter, accountId, subject, timestampMs);
        if (next === null) {
          if (raw != null) await b.redis.pexpire(key, this.ttlMs);
          return cursor.outbox;
        }
        // Indexed first: a crash after the write leaves an entry that is dropped once settled.
        await b.redis.sadd(this.openKey(exporter), accountId);
        if ((await b.redis.fpgCursorCas(key, raw ?? '', JSON.stringify(next), this.ttlMs)) === 1) {
          await this.noteWritten(exporter);
          return next.outbox;
        }
      }
      throw contended(key);
    });
  }

  billingOutstanding(exporter: string): Promise<BillingEvent[]> {
    const { b } = this;
    return b.run(async () => {
      const ids = await b.redis.smembers(this.openKey(exporter));
      const out: BillingEvent[] = [];
      for (const id of ids) {
        const cursor = decode(await b.redis.get(this.cursorKey(exporter, id)));
        if (settled(cursor)) await b.redis.srem(this.openKey(exporter), id);
        out.push(...cursor.outbox, ...cursor.failed);
      }
      return out;
    });
  }

  billingAck(event: BillingEvent): Promise<void> {
    return this.change(event.exporter, event.account_id, (c) => withoutEvent(c, event.id)).then(() => undefined);
  }

  billingDefer(event: BillingEvent, nextMs: number, error: string): Promise<void> {
    return this.change(event.exporter, event.account_id, (c) => withDeferred(c, event.id, nextMs, error)).then(
      () => undefined,
    );
  }

  billingFail(event: BillingEvent, atMs: number, error: string): Promise<void> {
    return this.change(event.exporter, event.account_id, (c) => withFailed(c, event.id, atMs, error)).then(
      () => undefined,
    );
  }

  async billingRetry(exporter: string, id: string | null): Promise<number> {
    const ids = await this.b.run(() => this.b.redis.smembers(this.openKey(exporter)));
    let count = 0;
    for (const accountId of ids) {
      let n = 0;
      await this.change(exporter, accountId, (c) => {
        const r = withRetried(c, id);
        n = r?.count ?? 0;
        return r?.cursor ?? null;
      });
      count += n;
    }
    return count;
  }

  /** Applies one transition with a compare-and-set; a settled cursor leaves the open index. */
  private change(exporter: string, accountId: string, step: (c: Cursor) => Cursor | null): Promise<boolean> {
    const { b } = this;
    const key = this.cursorKey(exporter, accountId);
    return b.run(async () => {
      for (let i = 0; i < CAS_TRIES; i++) {
        const raw = await b.redis.get(key);
        if (raw === null) return false;
        const next = step(decode(raw));
        if (next === null) return false;
        if ((await b.redis.fpgCursorCas(key, raw, JSON.stringify(next), this.ttlMs)) === 1) {
          if (settled(next)) await b.redis.srem(this.openKey(exporter), accountId);
          return true;
        }
      }
      throw contended(key);
    });
  }

  /**
   * A restore from a backup (or a replica that lagged, promoted) takes the cursors back with the
   * ledger. The ids stay apart anyway (cursor.ts eventId); this says it happened, on the first
   * event written after it by a gateway that was running before.
   */
  private async noteWritten(exporter: string): Promise<void> {
    const now = await this.b.redis.incr(`${this.b.options.key_prefix}billing:${exporter}:written`);
    const before = this.written.get(exporter) ?? 0;
    if (now <= before)
      this.b.log.warn(
        { exporter, events_written_before: before, events_written_now: now },
        'billing: the store went back in time (restored from a backup, or a replica that lagged took over): the cursors are where the backup had them, and the spans sent since are written again under new event ids (docs/billing.md#ids)',
      );
    this.written.set(exporter, Math.max(before, now));
  }

  private cursorKey(exporter: string, accountId: string): string {
    return `${this.b.options.key_prefix}{acct:${accountId}}:billing:${exporter}`;
  }

  private openKey(exporter: string): string {
    return `${this.b.options.key_prefix}billing:${exporter}:open`;
  }
}

function decode(raw: string | null): Cursor {
  return raw === null || raw === '' ? emptyCursor() : (JSON.parse(raw) as Cursor);
}

function contended(key: string): GatewayError {
  return new GatewayError('STORE_UNAVAILABLE', `billing cursor ${key} kept changing under ${CAS_TRIES} tries`);
}
