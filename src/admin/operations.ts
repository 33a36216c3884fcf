import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import {
  createAccount,
  createAccountInput,
  patchAccountInput,
  publicAccount,
  rotateKey,
  updateAccount,
} from '../keys/accounts.js';
import type { PriceBook } from '../prices/book.js';
import { parsePriceHistory } from '../prices/file.js';
import { type PriceSet, priceSetDocument } from '../prices/schema.js';
import { type Allowance, allowanceFor } from '../quota/allowance.js';
import { type Usage, usageObject } from '../quota/usage.js';
import type { Account, Store } from '../store/types.js';
import { formatInZone } from '../time/zone.js';
import type { Audit } from './audit.js';
import { accountInput, cancelInput, parse, purgeInput } from './input.js';
import { encodeCursor, listAccountsQuery, queryRecord } from './list-query.js';
import { type UsageExport, usageExport } from './usage-export.js';
import { exportQuery } from './usage-query.js';

type PriceStatus = 'current' | 'scheduled' | 'past';

export interface AccountView {
  account: Account;
  usage: Usage;
}

/**
 * Everything operators can do, shared by the admin API and the CLI so there is one
 * implementation. Inputs arrive unvalidated (JSON bodies, query strings, argv) and are checked
 * here, once. Every change writes one audit line naming `from` (a remote address, or "cli").
 */
export class Operations {
  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly book: PriceBook,
    private readonly clock: Clock,
    private readonly audit: Audit,
    /** Tells of a cancelled set (a prices.cancelled webhook event). */
    private readonly priceEvents?: { cancelled(set: PriceSet, seq: number): Promise<void> },
  ) {}

  async createAccount(body: unknown, from: string): Promise<{ account: Account; api_key: string }> {
    const created = await createAccount(
      this.store,
      this.config.plans,
      accountInput(createAccountInput, body, this.config.plans),
      this.clock.now(),
    );
    this.audit({
      action: 'account.create',
      account_id: created.account.id,
      from,
      after: { plan: created.account.plan, status: created.account.status, label: created.account.label },
    });
    return created;
  }

  /** One page of accounts, in id order; follow `next_cursor` until it is null. Never a key or key hash. */
  async listAccounts(query: unknown): Promise<{ accounts: Account[]; next_cursor: string | null }> {
    const { filter, after, limit } = parse(listAccountsQuery, query);
    const page = await this.store.listAccounts(filter, after, limit);
    return {
      accounts: page.accounts.map(publicAccount),
      next_cursor: page.next === null ? null : encodeCursor(page.next),
    };
  }

  /** Removes the account: its key stops working on every instance (the store announces it). */
  async deleteAccount(id: string, from: string): Promise<{ account: Account }> {
    const deleted = await this.store.deleteAccount(id);
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
    const stored = await this.store.getAccount(id);
    if (!stored) throw new GatewayError('NOT_FOUND', `no account with id ${id}`);
    const a = allowanceFor(stored, this.config.plans, this.config.time_zone, this.clock.now());
    const used = await this.store.usage(stored.id, a.period.id);
    return {
      account: publicAccount(stored),
      usage: usageObject(a, used),
    };
  }

  async patchAccount(id: string, body: unknown, from: string): Promise<{ account: Account }> {
    const patch = accountInput(patchAccountInput, body, this.config.plans);
    const stored = await this.store.getAccount(id);
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
    const account = await updateAccount(this.store, this.config.plans, stored, materialised);
    await this.recordPlanChange(account, a);
    const fields = Object.keys(materialised) as Array<keyof typeof materialised>;
    const pick = (a: Account): Record<string, unknown> => Object.fromEntries(fields.map((f) => [f, a[f]]));
    // The fields as they were, so an operator can put them back.
    this.audit({ action: 'account.update', account_id: id, from, before: pick(stored), after: pick(account) });
    return { account };
  }

  /**
   * A change of plan or limit (or of the period, by a new anchor) in the middle of a period is
   * written on the period's record, which keeps what applied before (usage-export.ts shows it).
   */
  private async recordPlanChange(account: Account, before: Allowance | null): Promise<void> {
    const after = this.allowance(account);
    if (before === null || after === null) return;
    const samePeriod = before.period.id === after.period.id;
    if (samePeriod && before.plan === after.plan && before.limit === after.limit) return;
    const now = this.clock.now();
    await this.store.recordPlanChange(account.id, before.period.id, now, {
      plan: after.plan,
      limit: after.limit,
      endMs: samePeriod ? after.period.endMs : now,
    });
    // Periods are named by their start: a plan whose period starts at the anchor (a month) can
    // land on the record of an earlier one that did too (the first trial day). Its counter goes
    // on under the new plan, so its record must say so, and end where the new period ends.
    if (!samePeriod)
      await this.store.recordPlanChange(account.id, after.period.id, now, {
        plan: after.plan,
        limit: after.limit,
        endMs: after.period.endMs,
      });
  }

  /**
   * Daily rows (`days`) or period rows of `GET /admin/usage[/periods]` and `usage
   * export|periods`: validated and the account looked up here, so a bad query is a 400 and an
   * unknown account a 404 before anything is written; the rows are written by the caller.
   */
  async usageExport(kind: 'days' | 'periods', query: URLSearchParams | Record<string, string>): Promise<UsageExport> {
    const record = query instanceof URLSearchParams ? queryRecord(query) : query;
    const q = exportQuery(record, this.config.time_zone, this.config.messages.invalid_range);
    let only = null;
    if (q.account !== null) {
      only = await this.store.getAccount(q.account);
      if (!only) throw new GatewayError('NOT_FOUND', `no account with id ${q.account}`);
    }
    return usageExport(kind, q, only, this.store, this.config, this.clock.now);
  }

  /** Null when the account's plan is no longer configured: a PATCH is how that gets mended. */
  private allowance(account: Account): Allowance | null {
    try {
      return allowanceFor(account, this.config.plans, this.config.time_zone, this.clock.now());
    } catch {
      return null;
    }
  }

  async rotateKey(id: string, from: string): Promise<{ account: Account; api_key: string }> {
    const rotated = await rotateKey(this.store, id);
    this.audit({ action: 'account.rotate_key', account_id: id, from });
    return rotated;
  }

  /**
   * Validates and stores a price set (replacing one of the same date), or a history document
   * (an array of sets, like the shipped file) in one store call with one announcement, so no
   * instance serves one of its sets as current on the way. Every instance reloads.
   */
  publishPrices(
    body: unknown,
    from: string,
  ): Promise<
    { status: PriceStatus; price_set: PriceSet } | { published: Array<{ effective_date: string; status: PriceStatus }> }
  > {
    return Array.isArray(body) ? this.publishHistory(body, from) : this.publishSet(body, from);
  }

  private async publishSet(body: unknown, from: string): Promise<{ status: PriceStatus; price_set: PriceSet }> {
    const doc = parse(priceSetDocument, body, 'PRICE_SET_INVALID');
    const updatedAt =
      doc.updated_at ?? formatInZone(this.clock.now(), this.config.time_zone).slice(0, 19).replace('T', ' ');
    const set: PriceSet = { ...doc, updated_at: updatedAt };
    await this.book.publish(set);
    this.audit({ action: 'prices.publish', effective_date: set.effective_date, from });
    return { status: this.statusOf(set.effective_date), price_set: set };
  }

  /** Sets without `updated_at` get their effective time, as when the shipped file is loaded. */
  private async publishHistory(
    body: unknown[],
    from: string,
  ): Promise<{ published: Array<{ effective_date: string; status: PriceStatus }> }> {
    if (body.length === 0) throw new GatewayError('PRICE_SET_INVALID', '(document): expected at least one price set');
    const sets = parsePriceHistory(body);
    await this.book.publishMany(sets);
    const dates = sets.map((s) => s.effective_date);
    this.audit({ action: 'prices.publish', effective_dates: dates, from });
    return { published: dates.map((d) => ({ effective_date: d, status: this.statusOf(d) })) };
  }

  private statusOf(date: string): PriceStatus {
    const view = this.book.view();
    return view.current?.effective_date === date
      ? 'current'
      : view.scheduled.some((s) => s.effective_date === date)
        ? 'scheduled'
        : 'past';
  }

  /**
   * Withdraws a set that is still scheduled. One already in effect (or served as current) is
   * refused with CONFLICT: requests were answered with it, so correct it by publishing a set of
   * the same date instead.
   */
  async cancelPrices(date: unknown, from: string): Promise<{ price_set: PriceSet }> {
    const { date: d } = parse(cancelInput, { date });
    // The newest history, not this process's copy: another instance may have just published.
    await this.book.load();
    const set = this.book.find(d);
    if (!set) throw new GatewayError('NOT_FOUND', `no price set for ${d}`);
    if (this.statusOf(d) !== 'scheduled')
      throw new GatewayError(
        'CONFLICT',
        `the price set of ${d} is already in effect; publish a corrected set for ${d} instead`,
      );
    const change = await this.store.deletePriceSet(d);
    if (!change) throw new GatewayError('NOT_FOUND', `no price set for ${d}`);
    await this.priceEvents?.cancelled(set, change.seq);
    await this.book.load();
    this.audit({ action: 'prices.cancel', effective_date: d, from });
    return { price_set: set };
  }

  /**
   * Empties the pass-through cache of every gateway (`all=true`), or one path's entries (a prefix
   * when it ends in `*`): announced through the store, so it reaches them all, this one included,
   * within a second.
   */
  async purgeCache(query: unknown, from: string): Promise<{ purged: 'all' | string }> {
    const { path } = parse(purgeInput, query);
    const p = path ?? null;
    await this.store.purgeCache(p);
    this.audit({ action: 'cache.purge', from, ...(p === null ? {} : { path: p }) });
    return { purged: p ?? 'all' };
  }

  prices(): { current: PriceSet | null; scheduled: PriceSet[] } {
    const { current, scheduled } = this.book.view();
    return { current, scheduled };
  }

  /** Sets that have been in effect, oldest first. */
  priceHistory(): { history: PriceSet[] } {
    return { history: this.book.view().history };
  }
}
