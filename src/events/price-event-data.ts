import { createHash } from 'node:crypto';
import type { PriceSet } from '../prices/price-set-schema.js';
import { eventId, type OutboxEvent, outboxEvent } from './event.js';

export type PriceEventType = 'prices.published' | 'prices.effective' | 'prices.cancelled';

/** What a price event carries: the set as served (its effective date, both regions, its source). */
function priceData(set: PriceSet, defaultSource: string): Record<string, unknown> {
  return {
    effective_date: set.effective_date,
    updated_at: set.updated_at,
    source: set.source ?? defaultSource,
    coastal: set.coastal,
    inland: set.inland,
  };
}

/**
 * A price event with a deterministic id, so the outbox keeps it once whichever gateway offers it:
 * - published and cancelled: the type, the date, the store's number for the change (`seq`, see
 *   store/prices/interface.ts PriceChange) and the set's content. Each change is news, even one
 *   that brings back a set seen before (published again after a cancel, or a revert); the
 *   content keeps ids apart should a store that lost its data number changes anew.
 * - effective (`seq` null): the type and the date. Every gateway sees a date take effect on its
 *   own clock, and a date takes effect once, whatever corrections follow.
 */
export function priceEvent(
  type: PriceEventType,
  set: PriceSet,
  seq: number | null,
  defaultSource: string,
  nowMs: number,
): OutboxEvent {
  const parts =
    seq === null
      ? [type, set.effective_date]
      : [type, set.effective_date, String(seq), createHash('sha256').update(JSON.stringify(set)).digest('base64url')];
  return outboxEvent(eventId(...parts), type, priceData(set, defaultSource), nowMs);
}
