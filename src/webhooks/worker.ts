import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config/config-schema.js';
import { type EndpointOrigin, endpointPolicy } from '../events/addresses.js';
import type { ThresholdContext } from '../events/event.js';
import { signatureHeader } from '../events/signing.js';
import { OutageLog } from '../log/outage.js';
import type { Metrics } from '../metrics/gateway-metrics.js';
import { allowanceFor } from '../quota/allowance.js';
import {
  type AccountStore,
  ANSWER_KEPT_BYTES,
  type Claimed,
  type CoordinationStore,
  type CountingStore,
  type EventStore,
  type StoreCapabilities,
} from '../store/store.js';
import { tracedCall } from '../telemetry/calls.js';
import { type SendPolicy, sendWebhook } from './send.js';

// Deliveries one gateway attempts side by side. An attempt that hangs costs only a socket until
// its timeout, so the bound is high: hanging receivers never take every slot from healthy ones.
const MAX_IN_FLIGHT = 256;
// Deliveries taken per store call; the worker claims again at once while more are due and a
// slot is free, and again whenever an attempt finishes.
const CLAIM_AT_ONCE = 16;
// A claim lasts twice the attempt's hard timeout and a second: only a gateway that stopped
// (killed, frozen) lets its claim run out, and then another attempts the delivery.
const leaseMs = (timeoutMs: number): number => 2 * timeoutMs + 1000;
// Crossings a gateway recorded but did not move to the outbox (it died in between) are looked
// for this often, by one gateway of the deployment at a time.
const SWEEP_EVERY_MS = 5 * 60_000;
const SWEEP_LEASE = 'webhook-sweep';

/** A retry's delay with ±20% jitter, so receivers coming back are not hit by every retry at once. */
export const withJitter = (ms: number): number => Math.round(ms * (0.8 + Math.random() * 0.4));

/**
 * Delivers the outbox, in every gateway process (never in the CLI, never on the request path):
 * each tick claims the deliveries due (a lease in the store, so no two gateways attempt the
 * same one), POSTs each signed, and records the outcome: delivered, retried after the next delay
 * of `webhooks.retry_delays_ms`, or failed once they are spent.
 */
export class WebhookWorker {
  private readonly holder = randomUUID();
  /** By who made the endpoint: a portal endpoint never follows the operator's address rule. */
  private readonly policies: Record<EndpointOrigin, SendPolicy>;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  /** Asked to look again (kick) while a round was running. */
  private again = false;
  /** Attempts under way, by delivery id. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private stopped = false;
  private lastSweepMs = 0;
  /** Rounds fail while the store is down, one per poll interval: logged as an outage, not each. */
  private readonly outage: OutageLog<'failed_rounds'>;

  private readonly events: EventStore;
  private readonly accounts: AccountStore;
  private readonly counting: CountingStore;
  private readonly coordination: CoordinationStore;
  private readonly capabilities: StoreCapabilities;
  private readonly config: Config;
  private readonly metrics: Metrics;
  private readonly log: Logger;
  private readonly now: () => number;

  constructor(o: {
    events: EventStore;
    /** The plan of an account whose crossing is recovered. */
    accounts: AccountStore;
    /** Crossings left behind, found by `recoverCrossings`. */
    counting: CountingStore;
    /** The lease that lets one gateway at a time sweep. */
    coordination: CoordinationStore;
    capabilities: StoreCapabilities;
    config: Config;
    metrics: Metrics;
    log: Logger;
    now: () => number;
  }) {
    this.events = o.events;
    this.accounts = o.accounts;
    this.counting = o.counting;
    this.coordination = o.coordination;
    this.capabilities = o.capabilities;
    this.config = o.config;
    this.metrics = o.metrics;
    this.log = o.log;
    this.now = o.now;
    const { config, log } = o;
    const w = config.webhooks;
    const policy = (origin: EndpointOrigin): SendPolicy => ({
      ...endpointPolicy(origin, config),
      timeoutMs: w.timeout_ms,
      keep: ANSWER_KEPT_BYTES,
    });
    this.policies = { operator: policy('operator'), portal: policy('portal') };
    this.outage = new OutageLog(log, ['failed_rounds'], {
      began: 'webhook delivery rounds failing (the store is unavailable?); trying again',
      goesOn: 'webhook delivery rounds still failing',
      ended: 'webhook delivery rounds work again',
    });
  }

  start(): void {
    this.schedule(0);
  }

  /** Looks for due deliveries now (an event was just enqueued, or an attempt finished and freed a slot). */
  kick(): void {
    if (this.stopped) return;
    if (this.running === null) this.schedule(0);
    else this.again = true;
  }

  /** Stops claiming; attempts under way finish (each within `webhooks.timeout_ms`) and are recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    this.outage.close();
    await Promise.all(this.inFlight.values());
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.again = false;
      this.running = this.tick().finally(() => {
        this.running = null;
        if (!this.stopped) this.schedule(this.again ? 0 : this.config.webhooks.poll_interval_ms);
      });
    }, ms);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    try {
      await this.round();
      this.outage.ended();
    } catch (err) {
      this.outage.failed((err as Error).message, 'failed_rounds');
    }
  }

  /**
   * Claims while deliveries are due and slots are free, and starts each attempt without waiting
   * for the others: a slow or hanging receiver holds its own slot, never the round. The store
   * hands out at most ENDPOINT_CONCURRENCY deliveries per endpoint at a time, oldest due first.
   */
  private async round(): Promise<void> {
    await this.sweep();
    while (!this.stopped) {
      const want = Math.min(CLAIM_AT_ONCE, MAX_IN_FLIGHT - this.inFlight.size);
      if (want <= 0) return;
      const claimed = await this.events.claimDeliveries(
        this.holder,
        this.now(),
        leaseMs(this.config.webhooks.timeout_ms),
        want,
      );
      for (const c of claimed) {
        const id = c.delivery.id;
        // Claimed again while this gateway still attempts it: its clock jumped past the lease.
        // The attempt under way records the outcome (the holder is the same).
        if (this.inFlight.has(id)) continue;
        const attempt = this.attempt(c)
          .catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'webhook attempt failed'))
          .finally(() => {
            this.inFlight.delete(id);
            this.kick();
          });
        this.inFlight.set(id, attempt);
      }
      if (claimed.length < want) return;
    }
  }

  private async attempt({ delivery, endpoint }: Claimed): Promise<void> {
    const now = this.now();
    const secrets = [endpoint.secret];
    if (endpoint.previous_secret !== null && (endpoint.previous_until_ms ?? 0) > now)
      secrets.push(endpoint.previous_secret);
    // The signing time is the wall clock's, as receivers check it against theirs.
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'fuel-gateway-webhooks',
      'webhook-id': delivery.event_id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader(secrets, delivery.event_id, timestamp, delivery.body),
    };
    const attempt = delivery.attempts + 1;
    const began = performance.now();
    const sent = await tracedCall(
      'POST webhook',
      endpoint.url,
      { 'fpg.event.type': delivery.type, 'fpg.delivery.attempt': attempt },
      () => sendWebhook(new URL(endpoint.url), headers, delivery.body, this.policies[endpoint.created_via]),
      (s) => ({ status: s.status ?? 0, ...(s.error === null ? {} : { error: s.error }) }),
    );
    const delays = this.config.webhooks.retry_delays_ms;
    const delay = delays[attempt - 1];
    const doneMs = this.now();
    const nextAttemptMs = sent.ok || delay === undefined ? null : doneMs + withJitter(delay);
    const result = sent.ok ? 'delivered' : nextAttemptMs === null ? 'failed' : 'retrying';
    this.metrics.webhookDeliveries.labels(result).inc();
    const line = {
      webhook_id: endpoint.id,
      event_id: delivery.event_id,
      type: delivery.type,
      attempt,
      status: sent.status,
    };
    if (result === 'failed') this.log.warn({ ...line, error: sent.error }, 'webhook delivery failed for good');
    else if (result === 'retrying')
      this.log.info(
        { ...line, error: sent.error, next_attempt_ms: nextAttemptMs },
        'webhook delivery failed; will retry',
      );
    await this.events
      .recordAttempt(delivery.id, this.holder, {
        status: sent.status,
        error: sent.error,
        delivered: sent.ok,
        nextAttemptMs,
        nowMs: doneMs,
        ms: Math.round(performance.now() - began),
        answer: sent.answer,
      })
      .catch((err: unknown) =>
        this.log.warn(
          { ...line, err: (err as Error).message },
          'recording a webhook attempt failed; it is attempted again once its claim runs out',
        ),
      );
  }

  /** Crossings left behind by a gateway that died between counting and moving them (Redis). */
  private async sweep(): Promise<void> {
    const now = this.now();
    if (!this.capabilities.crossingsCanBeStranded || now - this.lastSweepMs < SWEEP_EVERY_MS) return;
    this.lastSweepMs = now;
    if (!(await this.coordination.lease(SWEEP_LEASE, this.holder, SWEEP_EVERY_MS))) return;
    const found = await this.counting.recoverCrossings((id, period) => this.contextOf(id, period));
    if (found > 0) this.log.info({ found }, 'moved usage threshold events left behind to the outbox');
  }

  private async contextOf(accountId: string, periodId: string): Promise<ThresholdContext | null> {
    const account = await this.accounts.getAccount(accountId);
    if (!account) return null;
    try {
      const a = allowanceFor(account, this.config.plans, this.config.time_zone, Number(periodId));
      return { plan: a.plan, period_started_at: a.period.startedAt, period_ends_at: a.period.endsAt };
    } catch {
      return null;
    }
  }
}
