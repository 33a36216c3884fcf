import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Config } from '../config/config-schema.js';
import { GatewayError } from '../failures.js';
import { accountRecord, externalIdsInput, externalIdsPatch, grantRecord } from '../store/accounts/account-record.js';
import type {
  Account,
  AccountStore,
  ExternalIds,
  Grant,
  KeyChange,
  KeyStore,
  StoredAccount,
  StoredKey,
} from '../store/store.js';
import { newKey } from './api-keys.js';
import { isoInstant } from './instant.js';

const { shape } = accountRecord;

// Control characters (C0 and DEL) have no place in a name: they hide a spreadsheet formula behind
// them in a CSV export and garble terminals and logs.
const isControl = (c: number): boolean => c <= 0x1f || c === 0x7f;
const label = shape.label.max(200).refine((s) => ![...s].some((ch) => isControl(ch.charCodeAt(0))), {
  message: 'expected no control characters (U+0000-U+001F, U+007F)',
});

export const createAccountInput = z.strictObject({
  plan: shape.plan,
  label: label.default(''),
  status: shape.status.default('active'),
  limit: shape.limit.default(null),
  anchor: isoInstant.optional(),
  external_ids: externalIdsInput.optional(),
});

export const patchAccountInput = z
  .strictObject({
    status: shape.status.optional(),
    plan: shape.plan.optional(),
    limit: shape.limit.optional(),
    anchor: isoInstant.optional(),
    label: label.optional(),
    external_ids: externalIdsPatch.nullable().optional(),
    burst: shape.burst.unwrap().nullable().optional(),
    overage: shape.overage.unwrap().nullable().optional(),
    status_reason: z.literal('unpaid').nullable().optional(),
  })
  .refine((p) => Object.keys(p).length > 0, {
    message: 'expected at least one of status, plan, limit, anchor, label, external_ids, burst, overage',
  });

// A grant's size: a positive whole number of requests, bounded so a typo cannot make it endless.
const MAX_GRANT = 1_000_000_000;

/** `POST /admin/accounts/:id/grants` and `accounts grant`. */
export const grantInput = z.strictObject({
  requests: grantRecord.shape.requests.max(MAX_GRANT),
  note: label.nullable().optional(),
});

export type CreateAccountInput = z.infer<typeof createAccountInput>;
export type PatchAccountInput = z.infer<typeof patchAccountInput>;
export type GrantInput = z.infer<typeof grantInput>;

/** The account as operators see it: never its keys' hashes (the keys are listed apart); its grants have their own route. */
export const publicAccount = ({ keys: _omit, grants: _grants, ...account }: StoredAccount): Account => account;

/** A grant as operators see it: its period by its start, as `usage` shows it. */
export type PublicGrant = Omit<Grant, 'period_id'>;

export const publicGrant = (g: Grant): PublicGrant => ({
  id: g.id,
  requests: g.requests,
  note: g.note,
  period_started_at: g.period_started_at,
  created_at: g.created_at,
});

/** A new grant's id. */
export const grantId = (): string => `grant_${randomBytes(8).toString('hex')}`;

function checkPlan(plans: Config['plans'], plan: string, limit: number | null): void {
  // Own keys only: `constructor` or `__proto__` is no plan.
  const p = Object.hasOwn(plans, plan) ? plans[plan] : undefined;
  if (!p)
    throw new GatewayError('BAD_REQUEST', `plan: unknown plan "${plan}" (known: ${Object.keys(plans).join(', ')})`);
  if (limit === null && p.limit === undefined)
    throw new GatewayError('BAD_REQUEST', `limit: plan "${plan}" has no default limit; give one`);
}

/**
 * A new account with a new key named `keyName`, not yet stored (input validated by the caller, at
 * the edge): what `createAccount` stores, and what the bench seeds in bulk (`seedAccounts`).
 */
export function newAccount(
  plans: Config['plans'],
  data: CreateAccountInput,
  now: number,
  keyName = 'default',
): { account: StoredAccount; apiKey: string } {
  checkPlan(plans, data.plan, data.limit);
  const { stored, apiKey } = newKey({ name: keyName }, now);
  const created = new Date(now).toISOString();
  const account: StoredAccount = {
    id: `acct_${randomBytes(8).toString('hex')}`,
    status: data.status,
    plan: data.plan,
    limit: data.limit,
    anchor: data.anchor ?? created,
    label: data.label,
    created_at: created,
    revision: 1,
    keys: [stored],
  };
  if (data.external_ids !== undefined && Object.keys(data.external_ids).length > 0)
    account.external_ids = data.external_ids;
  return { account, apiKey };
}

/** Creates an account with a new key named `keyName`. The key is returned once and never stored. */
export async function createAccount(
  accounts: AccountStore,
  plans: Config['plans'],
  data: CreateAccountInput,
  now: number,
  keyName = 'default',
): Promise<{ account: Account; api_key: string }> {
  const { account, apiKey } = newAccount(plans, data, now, keyName);
  await accounts.createAccount(account);
  return { account: publicAccount(account), api_key: apiKey };
}

/** External ids after a merge patch: null removes them all; in an object, null removes one id. */
function mergedIds(now: ExternalIds | undefined, patch: PatchAccountInput['external_ids']): ExternalIds | null {
  if (patch === null || patch === undefined) return null;
  const out: Record<string, string> = { ...now };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (v !== undefined) out[k] = v;
  }
  return Object.keys(out).length === 0 ? null : out;
}

/** Applies a validated patch to `current` (as just read by the caller). */
export async function updateAccount(
  accounts: AccountStore,
  plans: Config['plans'],
  current: StoredAccount,
  patch: PatchAccountInput,
): Promise<Account> {
  checkPlan(plans, patch.plan ?? current.plan, patch.limit === undefined ? current.limit : patch.limit);
  const { external_ids: ids, ...given } = patch;
  // An account made active is no longer unpaid, whoever enables it.
  const rest =
    patch.status === 'active' && current.status_reason !== undefined ? { ...given, status_reason: null } : given;
  const updated = await accounts.updateAccount(
    current.id,
    ids === undefined ? rest : { ...rest, external_ids: mergedIds(current.external_ids, ids) },
  );
  if (!updated) throw new GatewayError('NOT_FOUND', `no account with id ${current.id}`);
  return publicAccount(updated);
}

/**
 * Replaces a key with a new one of the same name, scopes and allowlist; the old one works for
 * `graceS` more seconds (0: stops at once on this instance, within a second elsewhere).
 */
export async function rotateKey(
  keys: KeyStore,
  accountId: string,
  keyId: string,
  graceS: number,
  now: number,
): Promise<{ change: KeyChange; api_key: string }> {
  const { stored, apiKey } = newKey({ name: 'rotated' }, now);
  const change = await keys.rotateKey(accountId, keyId, stored, new Date(now + graceS * 1000).toISOString());
  return { change, api_key: apiKey };
}

/** The account's keys that have not expired at `now`. */
export const liveKeys = (account: StoredAccount, now: number): StoredKey[] =>
  account.keys.filter((k) => k.expires_at === null || Date.parse(k.expires_at) > now);
