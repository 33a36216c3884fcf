import type { OutboxEvent } from '../../events/event.js';
import type { Endpoint } from './interface.js';

/**
 * Whether an endpoint gets an event: a test event only its own endpoint; otherwise one of the
 * types it subscribes to, and for a usage event, only when it is unscoped or scoped to that
 * event's account (price events reach every subscriber). The Redis enqueue script says the same.
 */
export function endpointGets(endpoint: Endpoint, event: OutboxEvent, only: string | undefined): boolean {
  if (only !== undefined) return endpoint.id === only;
  if (event.type === 'webhook.test' || !endpoint.events.includes(event.type)) return false;
  return event.account_id === null || endpoint.account_id === null || endpoint.account_id === event.account_id;
}
