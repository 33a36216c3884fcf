import type { Clock } from '../clock.js';
import type { Config } from '../config/config-schema.js';
import { GatewayError } from '../failures.js';
import {
  type CreateAccountInput,
  createAccount,
  type GrantInput,
  grantId,
  liveKeys,
  type PatchAccountInput,
  type PublicGrant,
  publicAccount,
  publicGrant,
  updateAccount,
} from '../keys/accounts.js';
import type { AccountRotateInput, KeyView } from '../keys/api-keys.js';
import { type Allowance, allowanceFor } from '../quota/allowance.js';
import { type Usage, usageObject } from '../quota/usage.js';
import type { Account, AccountStore, CountingStore, Grant } from '../store/store.js';
import type { Audit } from './audit.js';
import type { KeyOperations } from './key-operations.js';
import { encodeCursor, type ListAccountsQuery } from './list-query.js';

export interface AccountView {
  account: Account;
  usage: Usage;
  keys: KeyView[];
}

export interface AccountOperationsDeps {
  accounts: AccountStore;
  /** The accounts' counters: usage, plan changes. */
  counting: CountingStore;
  plans: Config['plans'];
  zone: string;
  clock: Clock;
  audit: Audit;
  /** How long a period's records are kept after it ends (quota/retention.ts). */
  retentionMs: number;
  keys: KeyOperations;
}

/**
 * Accounts, for the admin API and the CLI alike: inputs arrive checked by the schemas their
 * table entries name (account-commands.ts, applied by input.ts `runOperation`). Every change writes one audit line naming `from`
 * (a remote address, or "cli").
 */
export class AccountOperations {
  private readonly accounts: AccountStore;
  private readonly counting: CountingStore;
  /** The configured plans (an account's input names one). */
  readonly plans: Config['plans'];
  private readonly zone: string;
  private readonly clock: Clock;
  private readonly audit: Audit;
  private readonly retentionMs: number;
  private readonly keys: KeyOperations;

  constructor(deps: AccountOperationsDeps) {
    this.retentionMs = deps.retentionMs;
    this.keys = deps.keys;
    this.accounts = deps.accounts;
    this.counting = deps.counting;
    this.plans = deps.plans;
    this.zone = deps.zone;
    this.clock = deps.clock;
    this.audit = deps.audit;
  }

  /** `keyName`: the first key's name (the demo accounts name theirs). */
  async createAccount(
    input: CreateAccountInput,
    from: string,
    keyName?: string,
  ): Promise<{ account: Account; api_key: string }> {
    const created = await createAccount(this.accounts, this.plans, input, this.clock.now(), keyName);
    this.audit({
      action: 'account.create',
      account_id: created.account.id,
      from,
      after: { plan: created.account.plan, status: created.account.status, label: created.account.label },
    });
    return created;
  }

  /** One page of accounts, in id order; follow `next_cursor` until it is null. Never a key or key hash. */
  async listAccounts({
    filter,
    after,
    limit,
  }: ListAccountsQuery): Promise<{ accounts: Account[]; next_cursor: string | null }> {
    const page = await this.accounts.listAccounts(filter, after, limit);
    return {
      accounts: page.accounts.map(publicAccount),
      next_cursor: page.next === null ? null : encodeCursor(page.next),
    };
  }

  /** Removes the account: its key stops working on every instance (the store announces it). */
  async deleteAccount(id: string, from: string): Promise<{ account: Account }> {
    const deleted = await this.accounts.deleteAccount(id);
    if (!deleted) throw new GatewayError('NOT_FOUND', `no account with id ${id}`);
    this.audit({
      action: 'account.delete',
      account_id: id,
      from,
      before: { plan: deleted.plan, status: deleted.status, label: deleted.label },
    });
    return { account: publicAccount(deleted) };
  }

  async showAccount(id: string): Promise<AccountView> {
    const stored = await this.accounts.getAccount(id);
    if (!stored) throw new GatewayError('NOT_FOUND', `no account with id ${id}`);
    const a = allowanceFor(stored, this.plans, this.zone, this.clock.now());
    const used = await this.counting.usage(stored.id, a.period.id);
    return {
      account: publicAccount(stored),
      usage: usageObject(a, used),
      keys: (await this.keys.list(id)).keys,
    };
  }

  async patchAccount(id: string, patch: PatchAccountInput, from: string): Promise<{ account: Account }> {
    const stored = await this.accounts.getAccount(id);
    if (!stored) throw new GatewayError('NOT_FOUND', `no account with id ${id}`);
    // A converted trial is a computed state; the first change writes it down, so the change
    // neither restarts the billing cycle from the trial's start nor resets requests_used.
    const a = this.allowance(stored);
    // A new plan comes with its own allowance: the account's own limit was agreed for the old
    // plan (an enterprise million kept on a downgrade to business). A limit given with the
    // change is the new one; a plan without a default limit (enterprise) then needs one.
    const planChanges = patch.plan !== undefined && patch.plan !== (a?.plan ?? stored.plan);
    const limited = planChanges && patch.limit === undefined ? { ...patch, limit: null } : patch;
    const materialised = a?.converted
      ? { plan: a.plan, anchor: new Date(a.anchorMs).toISOString(), limit: null, ...limited }
      : limited;
    const account = await updateAccount(this.accounts, this.plans, stored, materialised);
    await this.recordPlanChange(account, a);
    const fields = Object.keys(materialised) as Array<keyof typeof materialised>;
    const pick = (a: Account): Record<string, unknown> => Object.fromEntries(fields.map((f) => [f, a[f]]));
    // The fields as they were, so an operator can put them back.
    this.audit({ action: 'account.update', account_id: id, from, before: pick(stored), after: pick(account) });
    return { account };
  }

  /**
   * Rotates the account's one key, or the key `key_id` names (`grace_s` as the per-key route).
   * An account with several keys that have not expired has no "the key": 409, naming the
   * per-key route; when they are a key in the grace of its rotation and its successor, the
   * rotation was made already: 409 naming the successor, as the store answers a second rotation.
   */
  async rotateKey(
    id: string,
    { grace_s, key_id }: AccountRotateInput,
    from: string,
  ): Promise<{ account: Account; api_key: string; key: KeyView; previous: KeyView }> {
    const stored = await this.accounts.getAccount(id);
    if (!stored) throw new GatewayError('NOT_FOUND', `no account with id ${id}`);
    const live = liveKeys(stored, this.clock.now());
    const pending = live.length === 2 ? live.find((k) => live.some((s) => s.id === k.rotated_to)) : undefined;
    if (key_id === undefined && pending?.rotated_to !== undefined) {
      const next = pending.rotated_to;
      throw new GatewayError(
        'CONFLICT',
        `account ${id}'s key ${pending.id} was already rotated (it is in its grace): its successor is ${next}; rotate that one with POST /admin/accounts/${id}/keys/${next}/rotate`,
        [],
        { successor_key_id: next },
      );
    }
    const only = key_id ?? (live.length === 1 ? live[0] : live.length === 0 ? stored.keys.at(-1) : undefined)?.id;
    if (only === undefined)
      throw new GatewayError(
        'CONFLICT',
        `account ${id} has ${live.length} keys: rotate one with POST /admin/accounts/${id}/keys/KEY_ID/rotate`,
      );
    const rotated = await this.keys.rotateWith(id, only, grace_s, from, 'account.rotate_key');
    const account = await this.accounts.getAccount(id);
    if (!account) throw new GatewayError('NOT_FOUND', `no account with id ${id}`);
    return { account: publicAccount(account), api_key: rotated.api_key, key: rotated.key, previous: rotated.previous };
  }

  /**
   * Adds requests to the account's current period: its limit is the plan's (or its own) plus
   * the period's grants, on every gateway from its next request (the store bumps the revision).
   */
  async grant(id: string, input: GrantInput, from: string): Promise<{ grant: PublicGrant }> {
    const stored = await this.accounts.getAccount(id);
    if (!stored) throw new GatewayError('NOT_FOUND', `no account with id ${id}`);
    const a = this.allowance(stored);
    if (a === null)
      throw new GatewayError(
        'CONFLICT',
        `account ${id} has plan "${stored.plan}", which is not configured: set a plan first`,
      );
    const now = this.clock.now();
    const { period } = a;
    const grant: Grant = {
      id: grantId(),
      requests: input.requests,
      note: input.note ?? null,
      period_id: period.id,
      period_started_at: period.startedAt,
      created_at: new Date(now).toISOString(),
    };
    const updated = await this.accounts.addGrant(id, grant, {
      record: { plan: a.plan, kind: period.kind, startMs: period.startMs, endMs: period.endMs },
      limit: a.limit - a.granted,
      expireAtMs: period.endMs + this.retentionMs,
      dropBeforeMs: now - this.retentionMs,
    });
    if (!updated) throw new GatewayError('NOT_FOUND', `no account with id ${id}`);
    const shown = publicGrant(grant);
    this.audit({ action: 'account.grant', account_id: id, from, after: { ...shown } });
    return { grant: shown };
  }

  /** The account's grants of the periods within retention, oldest first, each naming its period. */
  async listGrants(id: string): Promise<{ grants: PublicGrant[] }> {
    const stored = await this.accounts.getAccount(id);
    if (!stored) throw new GatewayError('NOT_FOUND', `no account with id ${id}`);
    return { grants: (stored.grants ?? []).map(publicGrant) };
  }

  /**
   * A change of plan or limit (or of the period, by a new anchor) in the middle of a period is
   * written on the period's record, which keeps what applied before (usage-export.ts shows it).
   */
  private async recordPlanChange(account: Account, before: Allowance | null): Promise<void> {
    const after = this.allowance(account);
    if (before === null || after === null) return;
    const samePeriod = before.period.id === after.period.id;
    // Limits before grants: the record counts grants apart, and they stay with their period.
    const limit = after.limit - after.granted;
    if (samePeriod && before.plan === after.plan && before.limit - before.granted === limit) return;
    const now = this.clock.now();
    await this.counting.recordPlanChange(account.id, before.period.id, now, {
      plan: after.plan,
      limit,
      endMs: samePeriod ? after.period.endMs : now,
    });
    // Periods are named by their start: a plan whose period starts at the anchor (a month) can
    // land on the record of an earlier one that did too (the first trial day). Its counter goes
    // on under the new plan, so its record must say so, and end where the new period ends.
    if (!samePeriod)
      await this.counting.recordPlanChange(account.id, after.period.id, now, {
        plan: after.plan,
        limit,
        endMs: after.period.endMs,
      });
  }

  /** Null when the account's plan is no longer configured: a PATCH is how that gets mended. */
  private allowance(account: Account): Allowance | null {
    try {
      return allowanceFor(account, this.plans, this.zone, this.clock.now());
    } catch {
      return null;
    }
  }
}
