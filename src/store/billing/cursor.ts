import { randomBytes } from 'node:crypto';
import type { BillingEvent, PeriodCounts } from './interface.js';

/**
 * Where one exporter stands with one account: the running total it has assigned to events
 * (`sent`), each live period's count when it last did (`seen`), the events not yet taken by the
 * receiver, and those it refused. The same transitions serve both backends: the memory store
 * applies them in one synchronous step, the Redis store with a compare-and-set of the record.
 */
export interface Cursor {
  sent: number;
  seen: Record<string, number>;
  outbox: BillingEvent[];
  failed: BillingEvent[];
}

export const emptyCursor = (): Cursor => ({ sent: 0, seen: {}, outbox: [], failed: [] });

/**
 * `fpg.EXPORTER.ACCOUNT.FROM-TO.TAG`, TAG drawn when the event is written. The event is written
 * before it is sent and sent unchanged, so a resend has the same id. The span alone would not do:
 * a store restored from a backup has its cursors back where they were, and the span written
 * again would carry the id of the other requests already sent under it, which receivers drop.
 */
const eventId = (exporter: string, accountId: string, from: number, to: number): string =>
  `fpg.${exporter}.${accountId}.${from}-${to}.${randomBytes(5).toString('hex')}`;

/**
 * With nothing outstanding and a ledger that grew, the cursor with one new event for the growth;
 * else null (nothing to write). The growth is summed over the periods the ledger holds now:
 * a period gone from it (past retention) was sent before it went, and a refund nets against
 * requests counted since, because `seen` moves only when an event is written.
 */
export function withGrowth(
  cursor: Cursor,
  counts: PeriodCounts,
  exporter: string,
  accountId: string,
  subject: string,
  timestampMs: number,
): Cursor | null {
  if (cursor.outbox.length > 0) return null;
  let growth = 0;
  const seen: Record<string, number> = {};
  for (const [period, used] of counts) {
    seen[period] = used;
    growth += used - (cursor.seen[period] ?? 0);
  }
  if (growth <= 0) return null;
  const from = cursor.sent;
  const to = from + growth;
  const event: BillingEvent = {
    id: eventId(exporter, accountId, from, to),
    exporter,
    account_id: accountId,
    subject,
    from,
    to,
    value: growth,
    timestamp_ms: timestampMs,
    attempts: 0,
    next_attempt_ms: 0,
    last_error: null,
    failed_at_ms: null,
  };
  return { sent: to, seen, outbox: [event], failed: cursor.failed };
}

/** The cursor without the event `id` in its outbox (taken by the receiver); null when it is not there. */
export function withoutEvent(cursor: Cursor, id: string): Cursor | null {
  const outbox = cursor.outbox.filter((e) => e.id !== id);
  return outbox.length === cursor.outbox.length ? null : { ...cursor, outbox };
}

export function withDeferred(cursor: Cursor, id: string, nextMs: number, error: string): Cursor | null {
  const at = cursor.outbox.findIndex((e) => e.id === id);
  if (at === -1) return null;
  const outbox = [...cursor.outbox];
  const e = outbox[at] as BillingEvent;
  outbox[at] = { ...e, attempts: e.attempts + 1, next_attempt_ms: nextMs, last_error: error };
  return { ...cursor, outbox };
}

export function withFailed(cursor: Cursor, id: string, atMs: number, error: string): Cursor | null {
  const e = cursor.outbox.find((x) => x.id === id);
  if (e === undefined) return null;
  const failed = [...cursor.failed, { ...e, attempts: e.attempts + 1, failed_at_ms: atMs, last_error: error }];
  return { ...cursor, outbox: cursor.outbox.filter((x) => x.id !== id), failed };
}

/** Failed events (all, or the one `id`) back in the outbox, due at once. */
export function withRetried(cursor: Cursor, id: string | null): { cursor: Cursor; count: number } | null {
  const back = cursor.failed.filter((e) => id === null || e.id === id);
  if (back.length === 0) return null;
  const again = back.map((e) => ({ ...e, next_attempt_ms: 0, failed_at_ms: null }));
  return {
    cursor: { ...cursor, outbox: [...cursor.outbox, ...again], failed: cursor.failed.filter((e) => !back.includes(e)) },
    count: back.length,
  };
}

/** Nothing outstanding: the account can leave the exporter's index of open accounts. */
export const settled = (cursor: Cursor): boolean => cursor.outbox.length === 0 && cursor.failed.length === 0;
