import { createHash } from 'node:crypto';
import type { PriceSet } from '../prices/schema.js';
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
 * A price event, its id derived from the type, the date and (published, cancelled) the set's
 * content: every gateway (each has the clock that makes a set take effect) names it alike, so the
 * outbox keeps it once. Publishing the same content again raises nothing new; a date takes
 * effect once, whatever corrections follow.
 */
export function priceEvent(type: PriceEventType, set: PriceSet, defaultSource: string, nowMs: number): OutboxEvent {
  const content =
    type === 'prices.effective' ? '' : createHash('sha256').update(JSON.stringify(set)).digest('base64url');
  return outboxEvent(eventId(type, set.effective_date, content), type, priceData(set, defaultSource), nowMs);
}
