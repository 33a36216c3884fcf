/**
 * The account record, defined once (as prices/price-set-schema.ts defines a price set): its
 * fields, its ids in billing systems and its grants. The types (interface.ts), the memory state
 * file (memory/state-schema.ts), the Redis codec (redis/codec.ts) and the admin input
 * (keys/accounts.ts) derive from it. Stored fields are read as leniently as they were ever
 * written; the admin input adds the checks a new value must pass.
 */
import { z } from 'zod';
import { burstLimit, overage } from '../../config/plan-config.js';
import { storedKeySchema } from '../keys/key.js';
import { EXTERNAL_ID_NAMES, type ExternalIdName } from './external-id-names.js';

/** Who the account is in billing systems (docs/billing.md): each id with the format the admin API takes. */
const EXTERNAL_ID_FORMATS: Record<ExternalIdName, z.ZodString> = {
  /** The Stripe customer it is billed as. */
  stripe_customer: z
    .string()
    .regex(/^cus_[A-Za-z0-9]{1,250}$/, 'expected a Stripe customer id such as cus_NffrFeUfNV2Hib'),
  /** The CloudEvents subject. */
  billing_subject: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[\x21-\x7e]+$/, 'expected printable ASCII without spaces'),
};

/** The ids as one object, each made by `field` from its format. */
const eachExternalId = <S extends z.ZodType>(field: (format: z.ZodString) => S) =>
  z.strictObject(
    Object.fromEntries(EXTERNAL_ID_NAMES.map((n) => [n, field(EXTERNAL_ID_FORMATS[n])])) as Record<ExternalIdName, S>,
  );

/** As stored: any string, so an id kept before a format was tightened still reads. */
export const externalIds = eachExternalId(() => z.string().optional());
/** As given at creation. */
export const externalIdsInput = eachExternalId((format) => format.optional());
/** In a patch, as a JSON merge patch (RFC 7396): an id given is set, null removes it, one not named is kept. */
export const externalIdsPatch = eachExternalId((format) => format.nullable().optional());

/**
 * Requests added to one period of an account (a top-up). It belongs to the period it was made
 * in and ends with it; the period's record counts it too (`PeriodRecord.granted`).
 */
export const grantRecord = z.strictObject({
  id: z.string(),
  requests: z.number().int().positive(),
  note: z.string().nullable(),
  /** The period's id (its start in unix ms, as its counter is named): what the grant is matched by. */
  period_id: z.string(),
  /** The period's start as the `usage` object shows it. */
  period_started_at: z.string(),
  created_at: z.string(),
});

/** The account's own fields, one plain value each (a string field of the Redis hash). */
export const accountFields = {
  id: z.string().min(1),
  status: z.enum(['active', 'inactive']),
  plan: z.string().min(1),
  /** Per-account allowance; null uses the plan's. */
  limit: z.number().int().positive().nullable(),
  /** Trial start or billing anchor, ISO 8601. */
  anchor: z.string(),
  label: z.string(),
  created_at: z.string(),
  /** Bumped by every change, so a counter call made from a stale cached copy is refused. */
  revision: z.number().int().positive(),
};

/** Its settings, absent when unset (JSON fields of the Redis hash). */
export const accountSettings = {
  /** Its ids in billing systems; absent when none is set. */
  external_ids: externalIds.optional(),
  /** The account's own burst limit, over the plan's; absent: the plan's (or none). */
  burst: burstLimit.optional(),
  /** The account's own overage, over the plan's; absent: the plan's (or none). */
  overage: overage.optional(),
  /**
   * Why an inactive account is so, when it is for non-payment (the Stripe mirror, docs/billing.md):
   * its requests are refused with `billing.stripe.unpaid_message`. Cleared when it is made active.
   */
  status_reason: z.literal('unpaid').optional(),
};

/** The account as operators see it. */
export const accountRecord = z.strictObject({ ...accountFields, ...accountSettings });

/** Its keys and grants, kept on the record as the store keeps it. */
export const accountHoldings = {
  /** 1–20 live keys (store/keys/interface.ts), each with the SHA-256 hash of the key, never the key. */
  keys: z.array(storedKeySchema),
  /**
   * The grants of its recent periods, oldest first (absent: none). On the record, so the meter
   * works out the period's limit from the copy it caches, with no read of its own.
   */
  grants: z.array(grantRecord).optional(),
};

export const storedAccountRecord = accountRecord.extend(accountHoldings);

export type ExternalIds = z.infer<typeof externalIds>;
export type Grant = z.infer<typeof grantRecord>;
export type Account = z.infer<typeof accountRecord>;
export type AccountStatus = Account['status'];
export type StoredAccount = z.infer<typeof storedAccountRecord>;
