import type { OutboxEvent } from '../../events/event.js';
import type { MemoryData, MemoryDelivery } from '../memory/state.js';
import {
  ATTEMPTS_KEPT,
  type AttemptOutcome,
  type Claimed,
  DELIVERIES_KEPT,
  DELIVERY_KEEP_MS,
  type Delivery,
  ENDPOINT_CONCURRENCY,
  type Endpoint,
  EVENT_ID_KEEP_MS,
  type EventStore,
} from './interface.js';
import { endpointGets } from './match.js';

/**
 * Adds an event to the memory store's outbox, synchronously: the counting store calls it in the
 * same step that counts a request crossing a threshold. False when its id was seen before.
 */
export function enqueueInMemory(data: MemoryData, event: OutboxEvent, only?: string): boolean {
  const now = data.now();
  const seen = data.seenEvents.get(event.id);
  if (seen !== undefined && seen > now) return false;
  data.seenEvents.set(event.id, now + EVENT_ID_KEEP_MS);
  for (const endpoint of data.endpoints.values()) {
    if (!endpointGets(endpoint, event, only)) continue;
    const id = `${event.id}.${endpoint.id}`;
    data.deliveries.set(id, {
      id,
      event_id: event.id,
      endpoint_id: endpoint.id,
      type: event.type,
      body: event.body,
      attempts: 0,
      state: 'pending',
      last_status: null,
      last_error: null,
      next_attempt_ms: now,
      // The event's, as on Redis: the outbox's oldest age counts from when the event happened.
      created_ms: event.created_ms,
      log: [],
      holder: null,
      due_ms: now,
      forget_ms: null,
    });
  }
  data.countersDirty = true;
  return true;
}

const view = ({ holder: _h, due_ms: _d, forget_ms: _f, ...d }: MemoryDelivery): Delivery => d;

/** The outbox in the embedded store: in memory, and in its state file across restarts. */
export class MemoryEvents implements EventStore {
  constructor(private readonly data: MemoryData) {}

  async putEndpoint(endpoint: Endpoint): Promise<void> {
    this.data.endpoints.set(endpoint.id, endpoint);
    await this.data.save();
  }

  async addAccountEndpoint(endpoint: Endpoint & { account_id: string }, max: number): Promise<boolean> {
    let held = 0;
    for (const e of this.data.endpoints.values()) if (e.account_id === endpoint.account_id) held++;
    if (held >= max) return false;
    await this.putEndpoint(endpoint);
    return true;
  }

  async getEndpoint(id: string): Promise<Endpoint | null> {
    return this.data.endpoints.get(id) ?? null;
  }

  async listEndpoints(accountId?: string): Promise<Endpoint[]> {
    const all = [...this.data.endpoints.values()];
    return accountId === undefined ? all : all.filter((e) => e.account_id === accountId);
  }

  async deleteEndpoint(id: string): Promise<boolean> {
    if (!this.data.endpoints.delete(id)) return false;
    for (const [key, d] of this.data.deliveries) if (d.endpoint_id === id) this.data.deliveries.delete(key);
    await this.data.save();
    return true;
  }

  async enqueueEvent(event: OutboxEvent, onlyEndpoint?: string): Promise<boolean> {
    const added = enqueueInMemory(this.data, event, onlyEndpoint);
    if (added) await this.data.save();
    return added;
  }

  async claimDeliveries(holder: string, nowMs: number, leaseMs: number, max: number): Promise<Claimed[]> {
    const busy = new Map<string, number>();
    const due: MemoryDelivery[] = [];
    for (const [key, d] of this.data.deliveries) {
      if (d.forget_ms !== null && d.forget_ms <= nowMs) this.data.deliveries.delete(key);
      else if (d.due_ms === null) continue;
      else if (d.due_ms <= nowMs) due.push(d);
      else if (d.holder !== null) busy.set(d.endpoint_id, (busy.get(d.endpoint_id) ?? 0) + 1);
    }
    // Oldest due first (not the map's order, where old retries to a dead receiver come first).
    due.sort((a, b) => (a.due_ms as number) - (b.due_ms as number) || a.created_ms - b.created_ms);
    const out: Claimed[] = [];
    for (const d of due) {
      if (out.length >= max) break;
      const endpoint = this.data.endpoints.get(d.endpoint_id);
      if (!endpoint) {
        this.data.deliveries.delete(d.id);
        continue;
      }
      const held = busy.get(d.endpoint_id) ?? 0;
      if (held >= ENDPOINT_CONCURRENCY) continue;
      busy.set(d.endpoint_id, held + 1);
      d.holder = holder;
      d.due_ms = nowMs + leaseMs;
      out.push({ delivery: view(d), endpoint });
    }
    return out;
  }

  async recordAttempt(deliveryId: string, holder: string, o: AttemptOutcome): Promise<boolean> {
    const d = this.data.deliveries.get(deliveryId);
    if (!d || d.holder !== holder) return false;
    d.holder = null;
    d.attempts += 1;
    d.last_status = o.status;
    d.last_error = o.error;
    d.state = o.delivered ? 'delivered' : o.nextAttemptMs === null ? 'failed' : 'pending';
    d.next_attempt_ms = d.state === 'pending' ? o.nextAttemptMs : null;
    d.due_ms = d.next_attempt_ms;
    d.forget_ms = d.state === 'pending' ? null : o.nowMs + DELIVERY_KEEP_MS;
    const attempt = { at_ms: o.nowMs - o.ms, status: o.status, ms: o.ms, answer: o.answer, error: o.error };
    d.log = [...d.log, attempt].slice(-ATTEMPTS_KEPT);
    this.data.countersDirty = true;
    return true;
  }

  async replayDelivery(deliveryId: string, nowMs: number): Promise<boolean> {
    const d = this.data.deliveries.get(deliveryId);
    if (!d || (d.forget_ms !== null && d.forget_ms <= nowMs)) return false;
    if (d.holder !== null && (d.due_ms ?? 0) > nowMs) return true;
    d.state = 'pending';
    d.next_attempt_ms = nowMs;
    d.due_ms = nowMs;
    d.forget_ms = null;
    this.data.countersDirty = true;
    return true;
  }

  async listDeliveries(endpointId: string, limit: number): Promise<Delivery[]> {
    return [...this.data.deliveries.values()]
      .filter((d) => d.endpoint_id === endpointId)
      .sort((a, b) => b.created_ms - a.created_ms)
      .slice(0, Math.min(limit, DELIVERIES_KEPT))
      .map(view);
  }

  async outboxStats(): Promise<{ depth: number; oldestMs: number | null }> {
    let depth = 0;
    let oldestMs: number | null = null;
    for (const d of this.data.deliveries.values()) {
      if (d.state !== 'pending') continue;
      depth++;
      if (oldestMs === null || d.created_ms < oldestMs) oldestMs = d.created_ms;
    }
    return { depth, oldestMs };
  }
}
