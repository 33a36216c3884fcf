/** The `billing` section of the config: the exporters that push the usage ledger to billing systems. */
import { z } from 'zod';
import { posInt } from './fields.js';
import { stripeBilling } from './stripe-config.js';

const exporterName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'expected 1-32 lower-case letters, digits, "_" or "-"')
  .describe("The exporter's name, part of every event id: never rename an exporter that has sent events");

const httpUrl = (what: string) =>
  z
    .string()
    .url(`expected ${what}`)
    .refine((u) => /^https?:\/\//.test(u), `expected ${what} (http:// or https://)`);

const stripe = z.strictObject({
  type: z.literal('stripe'),
  name: exporterName.optional(),
  event_name: z.string().min(1).max(100).describe("The Stripe meter's event_name (a meter that sums payload[value])"),
  api_base: httpUrl('a URL such as https://api.stripe.com')
    .default('https://api.stripe.com')
    .describe("Stripe's API base (another for tests or an egress proxy); the key is env STRIPE_API_KEY"),
  stripe_version: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}(\.[a-z]+)?$/, 'expected a Stripe API version such as 2026-10-28.endive')
    .default('2026-10-28.endive')
    .describe(
      "The Stripe-Version sent with every request (the default is the one the stripe SDK 23.1.0 pins); without one Stripe answers in the account's default version",
    ),
});

const cloudevents = z.strictObject({
  type: z.literal('cloudevents'),
  name: exporterName.optional(),
  url: httpUrl('the ingest URL, such as https://openmeter.example/api/v1/events').describe(
    'Where batches of CloudEvents are POSTed (application/cloudevents-batch+json); bearer token from env CLOUDEVENTS_TOKEN',
  ),
  source: z.string().min(1).max(200).describe("Each event's CloudEvents source"),
  event_type: z.string().min(1).max(200).default('fuel_api_requests').describe("Each event's CloudEvents type"),
});

export const billingExporter = z.discriminatedUnion('type', [stripe, cloudevents]);
export type BillingExporterConfig = z.infer<typeof billingExporter>;

/** An exporter's name: its own, else its type. */
export const exporterNameOf = (e: BillingExporterConfig): string => e.name ?? e.type;

export const billing = z
  .strictObject({
    interval_s: posInt
      .min(5, 'expected at least 5')
      .describe(
        "How often each exporter sends each account's ledger growth; an event's timestamp is its interval's end",
      ),
    timeout_ms: posInt.describe('A send succeeds on a 2xx answer within this; else it is sent again later'),
    exporters: z
      .array(billingExporter)
      .describe(
        'Where usage is pushed: {type: stripe, event_name, api_base?, stripe_version?} and {type: cloudevents, url, source}',
      ),
    stripe: stripeBilling.describe('Stripe subscriptions mirrored into account plans (docs/billing.md)'),
  })
  .refine((b) => new Set(b.exporters.map(exporterNameOf)).size === b.exporters.length, {
    message: 'two exporters have the same name: give each its own `name`',
    path: ['exporters'],
  });
