import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { BillingExporterConfig } from '../config/billing-config.js';
import { exporterNameOf } from '../config/billing-config.js';
import { PROJECT_ROOT } from '../config/load.js';
import { GatewayError } from '../failures.js';
import type { BillingEvent, StoredAccount } from '../store/store.js';
import { tracedCall } from '../telemetry/calls.js';
import { type Answer, post } from './post.js';
import { type Outcome, outcomeOf } from './send-outcome.js';

/** Every exporter request names the gateway and its release, as an SDK names itself. */
const release = z
  .object({ name: z.string(), version: z.string() })
  .parse(JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')));
const USER_AGENT = `${release.name}/${release.version} (billing exporter)`;

/** One exporter: whom it bills for an account, and how it sends a batch of events. */
export interface Sender {
  readonly name: string;
  /** Events per request. */
  readonly batch: number;
  /** Who the receiver bills for the account; null: the account is not sent to this receiver. */
  subjectOf(account: StoredAccount): string | null;
  /** One outcome for the whole batch: the receiver takes or refuses a request as a whole. */
  send(events: BillingEvent[], timeoutMs: number, now: number, signal: AbortSignal): Promise<Outcome>;
}

/**
 * The exporters of the config, with their secrets from the environment (never from a file).
 * `allowPrivate`: webhooks.allow_private_addresses, which lets them reach private addresses too.
 */
export function sendersFor(
  exporters: BillingExporterConfig[],
  env: NodeJS.ProcessEnv,
  allowPrivate: boolean,
): Sender[] {
  return exporters.map((e, i) => {
    if (e.type === 'stripe') {
      const key = env.STRIPE_API_KEY ?? '';
      if (key === '')
        throw new GatewayError(
          'CONFIG_INVALID',
          `billing.exporters.${i} (stripe): set the STRIPE_API_KEY environment variable (a restricted key with write access to billing meter events)`,
        );
      return stripeSender(e, key, allowPrivate);
    }
    return cloudEventsSender(e, env.CLOUDEVENTS_TOKEN ?? '', allowPrivate);
  });
}

type StripeConfig = Extract<BillingExporterConfig, { type: 'stripe' }>;
type CloudEventsConfig = Extract<BillingExporterConfig, { type: 'cloudevents' }>;

/**
 * Stripe's Billing Meter Events API, one event a request. The identifier is the event's id, and
 * the Idempotency-Key too: a resend within Stripe's window gets the first answer again, and one
 * Stripe already has (`resource_already_exists`) counts as taken. Stripe-Version is pinned, as
 * the official SDK pins it: without one Stripe answers in the account's default version.
 */
function stripeSender(cfg: StripeConfig, key: string, allowPrivate: boolean): Sender {
  const url = `${cfg.api_base.replace(/\/+$/, '')}/v1/billing/meter_events`;
  return {
    name: exporterNameOf(cfg),
    batch: 1,
    subjectOf: (a) => a.external_ids?.stripe_customer ?? null,
    async send(events, timeoutMs, now, signal) {
      const e = events[0] as BillingEvent;
      const form = new URLSearchParams({
        event_name: cfg.event_name,
        'payload[value]': String(e.value),
        'payload[stripe_customer_id]': e.subject,
        identifier: e.id,
        timestamp: String(Math.floor(e.timestamp_ms / 1000)),
      });
      const headers = {
        authorization: `Bearer ${key}`,
        'content-type': 'application/x-www-form-urlencoded',
        'idempotency-key': e.id,
        'stripe-version': cfg.stripe_version,
        'user-agent': USER_AGENT,
      };
      const answer = await tracedCall(
        'POST billing',
        url,
        { 'fpg.event.type': cfg.event_name, 'fpg.billing.exporter': 'stripe', 'fpg.delivery.attempt': e.attempts + 1 },
        () => post(url, headers, form.toString(), timeoutMs, signal, allowPrivate),
        answerOutcome,
      );
      if (answer.kind === 'answer' && answer.status === 400 && answer.body.includes('"resource_already_exists"'))
        return { kind: 'taken' };
      return outcomeOf(answer, now, [key]);
    },
  };
}

/** OpenMeter-style ingest: a batch of CloudEvents 1.0, deduplicated by the receiver on source and id. */
function cloudEventsSender(cfg: CloudEventsConfig, token: string, allowPrivate: boolean): Sender {
  return {
    name: exporterNameOf(cfg),
    batch: 100,
    subjectOf: (a) => a.external_ids?.billing_subject ?? a.id,
    async send(events, timeoutMs, now, signal) {
      const body = events.map((e) => ({
        specversion: '1.0',
        id: e.id,
        source: cfg.source,
        type: cfg.event_type,
        subject: e.subject,
        time: new Date(e.timestamp_ms).toISOString(),
        datacontenttype: 'application/json',
        data: { requests: e.value },
      }));
      const headers: Record<string, string> = {
        'content-type': 'application/cloudevents-batch+json',
        'user-agent': USER_AGENT,
      };
      if (token !== '') headers.authorization = `Bearer ${token}`;
      const answer = await tracedCall(
        'POST billing',
        cfg.url,
        {
          'fpg.event.type': cfg.event_type,
          'fpg.billing.exporter': 'cloudevents',
          'fpg.billing.events': events.length,
          // A batch's attempt is its most tried event's.
          'fpg.delivery.attempt': Math.max(...events.map((ev) => ev.attempts)) + 1,
        },
        () => post(cfg.url, headers, JSON.stringify(body), timeoutMs, signal, allowPrivate),
        answerOutcome,
      );
      return outcomeOf(answer, now, [token]);
    },
  };
}

/** A billing answer as its delivery span records it. */
const answerOutcome = (a: Answer): { status: number; error?: string } =>
  a.kind === 'answer' ? { status: a.status } : { status: 0, error: a.kind };
