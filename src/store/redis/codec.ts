import { z } from 'zod';
import { accountSettings, grantRecord } from '../accounts/account-record.js';
import type { AccountPatch, ExternalIds, Grant, StoredAccount } from '../accounts/interface.js';
import type { StoreEvent } from '../coordination/interface.js';
import { previousReleaseHash } from '../keys/edit.js';
import { keysOf } from '../keys/key-record.js';

/** How records look in Redis: accounts as hashes of strings, announcements as JSON. */

const PATCHABLE = [
  'status',
  'plan',
  'limit',
  'anchor',
  'label',
  'status_reason',
] as const satisfies (keyof AccountPatch)[];

const storeEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('account'), id: z.string().min(1), keyHashes: z.array(z.string()) }),
  z.object({ type: z.literal('prices') }),
  z.object({
    type: z.literal('blocked'),
    address: z.string().min(1).max(64),
    ms: z.number().int().positive().max(86_400_000),
  }),
  z.object({ type: z.literal('cache_purge'), path: z.string().min(1).max(2048).nullable() }),
]);

/** HSET arguments; a null limit is an absent field. */
export function encodeAccount(a: StoredAccount): string[] {
  const fields = ['id', a.id, 'status', a.status, 'plan', a.plan, 'anchor', a.anchor, 'label', a.label];
  fields.push('created_at', a.created_at, 'revision', String(a.revision), 'keys', JSON.stringify(a.keys));
  // The previous release reads this field alone: while gateways of both run side by side (a
  // rolling upgrade, a rollback) it finds the account by the key it names.
  if (a.keys.length > 0) fields.push('key_hash', previousReleaseHash(a.keys));
  if (a.limit !== null) fields.push('limit', String(a.limit));
  const ids = externalIdsField(a.external_ids);
  if (ids !== null) fields.push('external_ids', ids);
  if (a.burst !== undefined) fields.push('burst', JSON.stringify(a.burst));
  if (a.overage !== undefined) fields.push('overage', JSON.stringify(a.overage));
  if (a.status_reason !== undefined) fields.push('status_reason', a.status_reason);
  if (a.grants !== undefined && a.grants.length > 0) fields.push('grants', JSON.stringify(a.grants));
  return fields;
}

/** Field → string, or null to remove the field (the update script's ARGV). */
export function encodePatch(patch: AccountPatch): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const field of PATCHABLE) {
    const value = patch[field];
    if (value !== undefined) out[field] = value === null ? null : String(value);
  }
  if (patch.external_ids !== undefined) out.external_ids = externalIdsField(patch.external_ids);
  if (patch.burst !== undefined) out.burst = patch.burst === null ? null : JSON.stringify(patch.burst);
  if (patch.overage !== undefined) out.overage = patch.overage === null ? null : JSON.stringify(patch.overage);
  return out;
}

/** External ids as their hash field (JSON), or null for none: an empty set is no field. */
function externalIdsField(ids: ExternalIds | null | undefined): string | null {
  return ids == null || Object.keys(ids).length === 0 ? null : JSON.stringify(ids);
}

// A grant with a field this release does not know (a later one wrote it) still reads, without it.
const grants = z.array(z.object(grantRecord.shape));

/**
 * The grants field (JSON, written by GRANT in accounts/lua.ts), or undefined when absent. A
 * damaged one reads as none: the account falls back to its limit before grants.
 */
function decodeGrants(text: string | undefined): Grant[] | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = grants.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON field of the account hash, or undefined when absent or not what `schema` expects. */
function decodeJson<T>(schema: z.ZodType<T>, text: string | undefined): T | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function decodeAccount(h: Record<string, string>): StoredAccount | null {
  if (h.id === undefined || h.revision === undefined) return null;
  const ids = decodeJson(accountSettings.external_ids, h.external_ids);
  const account: StoredAccount = {
    id: h.id,
    // Anything but a clean 'active' refuses requests: fail closed on a damaged record.
    status: h.status === 'active' ? 'active' : 'inactive',
    plan: h.plan ?? '',
    limit: h.limit === undefined ? null : Number(h.limit),
    anchor: h.anchor ?? '',
    label: h.label ?? '',
    created_at: h.created_at ?? '',
    revision: Number(h.revision),
    // `key_hash` alone: an account written before accounts had several keys. `lu:ID` and
    // `rt:ID`, beside the record: the day key ID last worked, the key that replaced it.
    keys: keysOf(h.keys, h.key_hash, h.created_at ?? '', (field) => h[field]),
  };
  if (ids !== undefined) account.external_ids = ids;
  const burst = decodeJson(accountSettings.burst, h.burst);
  if (burst !== undefined) account.burst = burst;
  const over = decodeJson(accountSettings.overage, h.overage);
  if (over !== undefined) account.overage = over;
  if (h.status_reason === 'unpaid') account.status_reason = 'unpaid';
  const granted = decodeGrants(h.grants);
  if (granted !== undefined) account.grants = granted;
  return account;
}

export const pairsToRecord = (flat: string[]): Record<string, string> =>
  Object.fromEntries(flat.flatMap((v, i) => (i % 2 === 0 ? [[v, flat[i + 1] ?? '']] : [])));

/** An announcement from the channel, or null when it is not one of ours. */
export function parseEvent(text: string): StoreEvent | null {
  try {
    const parsed = storeEvent.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
