import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config-schema.js';
import { maskUrl } from '../config/mask.js';
import { checkedAddress, type EndpointOrigin, endpointPolicy, RefusedAddress } from '../events/addresses.js';
import { EVENT_TYPES, eventId, outboxEvent } from '../events/event.js';
import { newSecret } from '../events/signing.js';
import { GatewayError } from '../failures.js';
import type { AccountStore, Delivery, Endpoint, EventStore } from '../store/store.js';
import type { Audit } from './audit.js';

// The old secret keeps signing beside the new one this long after a rotation.
const ROTATION_GRACE_MS = 86_400_000;
/** Endpoints an account may make for itself in the portal. */
const ACCOUNT_ENDPOINTS_MAX = 10;

export const createWebhookInput = z.strictObject({
  url: z.string().min(1).max(2048),
  events: z.array(z.enum(EVENT_TYPES)).min(1, 'expected at least one event type'),
  account_id: z.string().min(1).max(128).nullable().optional(),
  description: z.string().max(500).nullable().optional(),
});
// Deliveries in the portal's log: as many as the store keeps per endpoint.
const DELIVERIES_SHOWN = 100;
export const deliveriesQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(100).default(20) });

/** An endpoint as the admin API shows it: never its secrets. */
export interface EndpointView {
  id: string;
  url: string;
  events: string[];
  account_id: string | null;
  description: string | null;
  created_at: string;
  /** `portal`: made by the account's member in the portal, and held to the portal's address rule. */
  created_via: EndpointOrigin;
  /** Until when the secret before the last rotation still signs too; null when none does. */
  previous_secret_expires_at: string | null;
}

export interface DeliveryView {
  event_id: string;
  type: string;
  state: Delivery['state'];
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt: string | null;
  created_at: string;
}

/** A delivery with its attempts, as the portal's delivery log shows it. */
export interface DeliveryLogView {
  /** The event's id: the same on every attempt (`webhook-id`). */
  id: string;
  event_type: string;
  state: Delivery['state'];
  created_at: string;
  next_attempt: string | null;
  /** The latest attempts, oldest first; `body` is the start of the receiver's answer. */
  attempts: Array<{ at: string; status: number | null; ms: number; body: string; error: string | null }>;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
const whole = (ms: number): string => new Date(ms).toISOString();

/**
 * Webhook endpoints for the admin API and the CLI. A URL is checked at the edge (https unless
 * `webhooks.allow_http`; its host must not resolve to a refused address) and again at every
 * delivery. The secret is shown once, at creation and at rotation, and never logged.
 */
export class WebhookOperations {
  private readonly events: EventStore;
  private readonly accounts: AccountStore;
  private readonly config: Config;
  private readonly clock: Clock;
  private readonly audit: Audit;
  private readonly enqueued: () => void;

  constructor(deps: {
    /** Endpoints, their deliveries and test events. */
    events: EventStore;
    /** An endpoint's account must exist. */
    accounts: AccountStore;
    config: Config;
    clock: Clock;
    audit: Audit;
    /** An event was enqueued: the local worker looks at once (none in the CLI). */
    enqueued?: (() => void) | undefined;
  }) {
    this.events = deps.events;
    this.accounts = deps.accounts;
    this.config = deps.config;
    this.clock = deps.clock;
    this.audit = deps.audit;
    this.enqueued = deps.enqueued ?? (() => undefined);
  }

  /** An operator's endpoint, for every account's events or one account's. */
  create(
    input: z.infer<typeof createWebhookInput>,
    from: string,
  ): Promise<Omit<EndpointView, 'previous_secret_expires_at'> & { secret: string }> {
    return this.add(input, from, 'operator');
  }

  /** Every endpoint, or one account's (`accountId`, the portal's: its endpoints and no other). */
  async list(accountId?: string): Promise<{ webhooks: EndpointView[] }> {
    const all = await this.events.listEndpoints(accountId);
    all.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    return { webhooks: all.map((e) => this.view(e)) };
  }

  /**
   * An account's own endpoint, made in the portal: for its own events only (the caller's input
   * says which), at most ACCOUNT_ENDPOINTS_MAX of them, the URL held to the same checks under the
   * portal's address rule (`portal.webhooks.allow_private_addresses`), and stored as the portal's
   * so that every delivery is held to it too.
   */
  async createFor(
    accountId: string,
    input: Pick<z.infer<typeof createWebhookInput>, 'url' | 'events' | 'description'>,
    from: string,
  ): ReturnType<WebhookOperations['create']> {
    return this.add({ ...input, account_id: accountId }, from, 'portal', ACCOUNT_ENDPOINTS_MAX);
  }

  /** `most`: the endpoints its account may have, this one included (the portal's bound). */
  private async add(
    input: z.infer<typeof createWebhookInput>,
    from: string,
    origin: EndpointOrigin,
    most?: number,
  ): ReturnType<WebhookOperations['create']> {
    const url = await this.checkUrl(input.url, origin);
    const accountId = input.account_id ?? null;
    if (accountId !== null && !(await this.accounts.getAccount(accountId)))
      throw new GatewayError('BAD_REQUEST', `account_id: no account with id ${accountId}`);
    const endpoint: Endpoint = {
      id: `wh_${randomBytes(8).toString('hex')}`,
      url: url.href,
      events: [...new Set(input.events)],
      account_id: accountId,
      description: input.description ?? null,
      secret: newSecret(),
      previous_secret: null,
      previous_until_ms: null,
      created_at: new Date(this.clock.now()).toISOString(),
      created_via: origin,
    };
    if (most === undefined || accountId === null) await this.events.putEndpoint(endpoint);
    else if (!(await this.events.addAccountEndpoint({ ...endpoint, account_id: accountId }, most)))
      throw new GatewayError('CONFLICT', `an account has at most ${most} webhook endpoints`);
    this.audit({ action: 'webhook.create', webhook_id: endpoint.id, from, after: this.audited(endpoint) });
    const { id, events, account_id, description, created_at, created_via, secret } = endpoint;
    return { id, url: maskUrl(endpoint.url), events, account_id, description, secret, created_at, created_via };
  }

  /** `accountId`: only an endpoint of that account is found (the portal's); another's is 404. */
  async remove(id: string, from: string, accountId?: string): Promise<{ webhook: EndpointView }> {
    const endpoint = await this.find(id, accountId);
    if (!(await this.events.deleteEndpoint(id))) throw new GatewayError('NOT_FOUND', `no webhook with id ${id}`);
    this.audit({ action: 'webhook.delete', webhook_id: id, from, before: this.audited(endpoint) });
    return { webhook: this.view(endpoint) };
  }

  /** A new secret; the old one keeps signing beside it for a day, so receivers can switch over. */
  async rotateSecret(
    id: string,
    from: string,
  ): Promise<{ id: string; secret: string; previous_secret_expires_at: string }> {
    const endpoint = await this.find(id);
    const until = this.clock.now() + ROTATION_GRACE_MS;
    const rotated: Endpoint = {
      ...endpoint,
      secret: newSecret(),
      previous_secret: endpoint.secret,
      previous_until_ms: until,
    };
    await this.events.putEndpoint(rotated);
    this.audit({ action: 'webhook.rotate_secret', webhook_id: id, from });
    return { id, secret: rotated.secret, previous_secret_expires_at: new Date(until).toISOString() };
  }

  /** Sends a `webhook.test` event to this endpoint alone, delivered like any other: signed and retried. */
  async test(id: string, from: string, accountId?: string): Promise<{ event_id: string; type: 'webhook.test' }> {
    const endpoint = await this.find(id, accountId);
    const now = this.clock.now();
    const event = outboxEvent(
      eventId('webhook.test', id, String(now), randomBytes(8).toString('hex')),
      'webhook.test',
      { webhook_id: id, url: endpoint.url },
      now,
    );
    await this.events.enqueueEvent(event, id);
    this.enqueued();
    this.audit({ action: 'webhook.test', webhook_id: id, from });
    return { event_id: event.id, type: 'webhook.test' };
  }

  async deliveries(id: string, { limit }: z.infer<typeof deliveriesQuery>): Promise<{ deliveries: DeliveryView[] }> {
    await this.find(id);
    const list = await this.events.listDeliveries(id, limit);
    return {
      deliveries: list.map((d) => ({
        event_id: d.event_id,
        type: d.type,
        state: d.state,
        attempts: d.attempts,
        last_status: d.last_status,
        last_error: d.last_error,
        next_attempt: iso(d.next_attempt_ms),
        created_at: new Date(d.created_ms).toISOString(),
      })),
    };
  }

  /** An endpoint's latest deliveries with each one's attempts (the portal's delivery log). */
  async log(id: string, accountId: string): Promise<{ deliveries: DeliveryLogView[] }> {
    await this.find(id, accountId);
    const list = await this.events.listDeliveries(id, DELIVERIES_SHOWN);
    return {
      deliveries: list.map((d) => ({
        id: d.event_id,
        event_type: d.type,
        state: d.state,
        created_at: whole(d.created_ms),
        next_attempt: iso(d.next_attempt_ms),
        attempts: d.log.map((a) => ({
          at: whole(a.at_ms),
          status: a.status,
          ms: a.ms,
          body: a.answer,
          error: a.error,
        })),
      })),
    };
  }

  /** One more attempt of a delivery, now, signed and recorded as any other (`eventId`: its event's id). */
  async replay(id: string, eventId: string, from: string, accountId?: string): Promise<{ delivery_id: string }> {
    await this.find(id, accountId);
    if (!(await this.events.replayDelivery(`${eventId}.${id}`, this.clock.now())))
      throw new GatewayError('NOT_FOUND', `no delivery ${eventId} of webhook ${id}`);
    this.enqueued();
    this.audit({ action: 'webhook.replay', webhook_id: id, event_id: eventId, from });
    return { delivery_id: eventId };
  }

  private async find(id: string, accountId?: string): Promise<Endpoint> {
    const endpoint = await this.events.getEndpoint(id);
    if (!endpoint || (accountId !== undefined && endpoint.account_id !== accountId))
      throw new GatewayError('NOT_FOUND', `no webhook with id ${id}`);
    return endpoint;
  }

  private async checkUrl(text: string, origin: EndpointOrigin): Promise<URL> {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new GatewayError('BAD_REQUEST', 'url: expected an absolute https:// URL');
    }
    if (url.username !== '' || url.password !== '')
      throw new GatewayError('BAD_REQUEST', 'url: credentials in the URL are not accepted (they would be listed)');
    if (url.hash !== '') throw new GatewayError('BAD_REQUEST', 'url: a #fragment is never sent; leave it out');
    try {
      await checkedAddress(url, endpointPolicy(origin, this.config));
    } catch (err) {
      if (err instanceof RefusedAddress) throw new GatewayError('BAD_REQUEST', `url: ${err.message}`);
      throw err;
    }
    return url;
  }

  private view(e: Endpoint): EndpointView {
    const grace = e.previous_until_ms !== null && e.previous_until_ms > this.clock.now() ? e.previous_until_ms : null;
    return {
      id: e.id,
      url: maskUrl(e.url),
      events: e.events,
      account_id: e.account_id,
      description: e.description,
      created_at: e.created_at,
      created_via: e.created_via,
      previous_secret_expires_at: iso(grace),
    };
  }

  /** What the audit line says of an endpoint: never its secret, nor a URL's query (it may hold a token). */
  private audited(e: Endpoint): Record<string, unknown> {
    const u = new URL(e.url);
    return { url: u.origin + u.pathname, events: e.events, account_id: e.account_id, created_via: e.created_via };
  }
}
