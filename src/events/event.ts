import { createHash } from 'node:crypto';

/** The events an endpoint can subscribe to. `webhook.test` goes only to the endpoint it tests. */
export const EVENT_TYPES = [
  'usage.threshold',
  'prices.published',
  'prices.effective',
  'prices.cancelled',
  'key.created',
  'key.revoked',
  'key.rotated',
  'key.expiring',
  'key.leaked',
] as const;
export type EventType = (typeof EVENT_TYPES)[number] | 'webhook.test';

/** The events about one account alone: what an account's own endpoint made in the portal may get. */
export const ACCOUNT_EVENT_TYPES = [
  'usage.threshold',
  'key.created',
  'key.revoked',
  'key.rotated',
  'key.expiring',
  'key.leaked',
] as const satisfies readonly EventType[];
export type AccountEventType = (typeof ACCOUNT_EVENT_TYPES)[number];

/**
 * One event as the outbox keeps it: its stable id (the `webhook-id` of every attempt), its type,
 * the account it concerns (usage and key events: it decides which scoped endpoints get it) and the
 * body exactly as it is signed and sent.
 */
export interface OutboxEvent {
  id: string;
  type: EventType;
  account_id: string | null;
  /** `{"type","timestamp","data"}`, encoded once, so every attempt signs the same bytes. */
  body: string;
  created_ms: number;
}

/**
 * A deterministic event id: every gateway that sees the same happening names it alike, so the
 * outbox keeps it once (set-if-absent on the id). `msg_` as Standard Webhooks' examples.
 */
export function eventId(...parts: string[]): string {
  return `msg_${createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 27)}`;
}

export function outboxEvent(
  id: string,
  type: EventType,
  data: unknown,
  nowMs: number,
  accountId: string | null = null,
): OutboxEvent {
  const body = JSON.stringify({ type, timestamp: new Date(nowMs).toISOString(), data });
  return { id, type, account_id: accountId, body, created_ms: nowMs };
}

/** What a `usage.threshold` event says beyond the crossing itself: fixed for an account's period. */
export interface ThresholdContext {
  plan: string;
  period_started_at: string;
  period_ends_at: string;
}

/** A crossing as the counting store records it (in the same step that counts). */
export interface Crossing {
  accountId: string;
  periodId: string;
  percent: number;
  used: number;
  limit: number;
}

/** One id per account, period and threshold: whichever gateway builds it, and however often. */
export function thresholdEvent(c: Crossing, ctx: ThresholdContext, nowMs: number): OutboxEvent {
  const data = {
    account_id: c.accountId,
    plan: ctx.plan,
    threshold_percent: c.percent,
    requests_used: c.used,
    request_limit: c.limit,
    period_started_at: ctx.period_started_at,
    period_ends_at: ctx.period_ends_at,
  };
  const id = eventId('usage.threshold', c.accountId, c.periodId, String(c.percent));
  return outboxEvent(id, 'usage.threshold', data, nowMs, c.accountId);
}
