/** The memory store's state file as it is read back: every field checked, so a damaged file is refused whole. */
import { z } from 'zod';
import { ENDPOINT_ORIGINS } from '../../events/addresses.js';
import { EVENT_TYPES } from '../../events/event.js';
import { priceSetDocument } from '../../prices/price-set-schema.js';
import { accountFields, accountHoldings, accountSettings } from '../accounts/account-record.js';
import { stripeStateSchema } from '../stripe/memory-state.js';

const eventType = z.enum([...EVENT_TYPES, 'webhook.test']);
const webhooksState = z.strictObject({
  endpoints: z.array(
    z.strictObject({
      id: z.string(),
      url: z.string(),
      events: z.array(eventType),
      account_id: z.string().nullable(),
      description: z.string().nullable(),
      secret: z.string(),
      previous_secret: z.string().nullable(),
      previous_until_ms: z.number().nullable(),
      created_at: z.string(),
      // Absent in files written before the portal's endpoints were told apart.
      created_via: z.enum(ENDPOINT_ORIGINS).default('operator'),
    }),
  ),
  deliveries: z.array(
    z.strictObject({
      id: z.string(),
      event_id: z.string(),
      endpoint_id: z.string(),
      type: eventType,
      body: z.string(),
      attempts: z.number().int(),
      state: z.enum(['pending', 'delivered', 'failed']),
      last_status: z.number().int().nullable(),
      last_error: z.string().nullable(),
      next_attempt_ms: z.number().nullable(),
      created_ms: z.number(),
      // Absent in files written before deliveries kept their attempts.
      log: z
        .array(
          z.strictObject({
            at_ms: z.number(),
            status: z.number().int().nullable(),
            ms: z.number(),
            answer: z.string(),
            error: z.string().nullable(),
          }),
        )
        .default([]),
      holder: z.string().nullable(),
      due_ms: z.number().nullable(),
      forget_ms: z.number().nullable(),
    }),
  ),
  seen: z.array(z.tuple([z.string(), z.number()])),
});

const billingEvent = z.strictObject({
  id: z.string(),
  exporter: z.string(),
  account_id: z.string(),
  subject: z.string(),
  from: z.number().int().nonnegative(),
  to: z.number().int().positive(),
  value: z.number().int().positive(),
  timestamp_ms: z.number(),
  attempts: z.number().int().nonnegative(),
  next_attempt_ms: z.number(),
  last_error: z.string().nullable(),
  failed_at_ms: z.number().nullable(),
});
const billingCursor = z.strictObject({
  sent: z.number().int().nonnegative(),
  seen: z.record(z.string(), z.number().int().nonnegative()),
  outbox: z.array(billingEvent),
  failed: z.array(billingEvent),
});

/** An account, its fields in the order this release writes them. */
const storedAccount = z.strictObject({
  ...accountFields,
  /** The one key of a file written before accounts had several keys. */
  key_hash: accountHoldings.keys.element.shape.key_hash.optional(),
  keys: accountHoldings.keys.min(1).optional(),
  ...accountSettings,
  grants: accountHoldings.grants,
});

/** What the embedded store keeps on disk between runs. */
export const stateSchema = z.strictObject({
  version: z.literal(1),
  accounts: z.array(storedAccount),
  /** Deleted accounts kept while their period records are (absent in files written before). */
  deleted: z.array(z.strictObject({ account: storedAccount, untilMs: z.number() })).optional(),
  /** Numbers the changes of the prices (absent in files written before it). */
  price_seq: z.number().int().nonnegative().optional(),
  prices: z.array(priceSetDocument.extend({ updated_at: z.string(), origin: z.literal('upstream').optional() })),
  counters: z.array(
    z.strictObject({
      account: z.string(),
      period: z.string(),
      used: z.number().int().nonnegative(),
      expire_at_ms: z.number(),
      days: z.record(z.string(), z.number().int().nonnegative()).optional(),
      record: z
        .strictObject({
          plan: z.string(),
          kind: z.enum(['trial', 'monthly']),
          limit: z.number().int().nonnegative(),
          startMs: z.number(),
          endMs: z.number(),
          changes: z.array(z.strictObject({ atMs: z.number(), plan: z.string(), limit: z.number(), used: z.number() })),
          granted: z.number().int().nonnegative().optional(),
        })
        .nullable()
        .optional(),
      alerted: z.array(z.number().int()).optional(),
    }),
  ),
  webhooks: webhooksState.optional(),
  billing: z.array(z.tuple([z.string(), billingCursor])).optional(),
  /** The portal's members (absent in files written before it). */
  members: z
    .array(
      z.strictObject({
        account_id: z.string(),
        email: z.string(),
        role: z.enum(['owner', 'developer']),
        added_at: z.string(),
        last_sign_in_at: z.string().optional(),
      }),
    )
    .optional(),
  /** The portal's sign-ups waiting for an operator (absent in files written before them). */
  signups: z.array(z.strictObject({ id: z.string(), email: z.string(), requested_at: z.string() })).optional(),
  /** People's passkeys (absent in files written before them). */
  passkeys: z
    .array(
      z.strictObject({
        id: z.string(),
        email: z.string(),
        public_key: z.string(),
        counter: z.number().int().nonnegative(),
        transports: z.array(z.string()),
        name: z.string(),
        created_at: z.string(),
        last_used_at: z.string().optional(),
      }),
    )
    .optional(),
  /** The Stripe mirror (absent in files written before it). */
  stripe: stripeStateSchema.optional(),
});

export type MemoryState = z.infer<typeof stateSchema>;
