import type { z } from 'zod';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import { createAccount, createAccountInput, patchAccountInput, publicAccount, rotateKey, updateAccount } from '../keys/accounts.js';
import type { PriceBook } from '../prices/book.js';
import { describeIssues, priceSetDocument, type PriceSet } from '../prices/schema.js';
import { formatInZone } from '../time/zone.js';
import { allowanceFor, type Allowance } from '../quota/allowance.js';
import { usageObject, type Usage } from '../quota/usage.js';
import type { Account, Store } from '../store/types.js';

/** Validates external input at the edge: a bad body is a 400 naming each field. */
function parse<T extends z.ZodType>(schema: T, body: unknown, code: 'BAD_REQUEST' | 'PRICE_SET_INVALID' = 'BAD_REQUEST'): z.infer<T> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const lines = describeIssues(r.error);
  throw new GatewayError(code, lines.join('; '), lines);
}

export interface AccountView {
  account: Account;
  usage: Usage;
}

/**
 * Everything operators can do, shared by the admin API and the CLI so there is one
 * implementation. Inputs arrive unvalidated (JSON bodies, argv) and are checked here, once.
 */
export class Operations {
  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly book: PriceBook,
    private readonly clock: Clock,
  ) {}

  async createAccount(body: unknown): Promise<{ account: Account; api_key: string }> {
    return createAccount(this.store, this.config.plans, parse(createAccountInput, body), this.clock.now());
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

  async patchAccount(id: string, body: unknown): Promise<{ account: Account }> {
    const patch = parse(patchAccountInput, body);
    const stored = await this.store.getAccount(id);
    if (!stored) throw new GatewayError('NOT_FOUND', `no account with id ${id}`);
    // A converted trial is a computed state; the first change writes it down, so the change
    // neither restarts the billing cycle from the trial's start nor resets requests_used.
    const a = this.allowance(stored);
    const materialised = a?.converted ? { plan: a.plan, anchor: new Date(a.anchorMs).toISOString(), limit: null, ...patch } : patch;
    return { account: await updateAccount(this.store, this.config.plans, stored, materialised) };
  }

  /** Null when the account's plan is no longer configured: a PATCH is how that gets mended. */
  private allowance(account: Account): Allowance | null {
    try {
      return allowanceFor(account, this.config.plans, this.config.time_zone, this.clock.now());
    } catch {
      return null;
    }
  }

  rotateKey(id: string): Promise<{ account: Account; api_key: string }> {
    return rotateKey(this.store, id);
  }

  /** Validates and stores a price set (replacing one of the same date); every instance reloads. */
  async publishPrices(body: unknown): Promise<{ status: 'current' | 'scheduled' | 'past'; price_set: PriceSet }> {
    const doc = parse(priceSetDocument, body, 'PRICE_SET_INVALID');
    const updatedAt = doc.updated_at ?? formatInZone(this.clock.now(), this.config.time_zone).slice(0, 19).replace('T', ' ');
    const set: PriceSet = { ...doc, updated_at: updatedAt };
    await this.book.publish(set);
    const view = this.book.view();
    const status = view.current?.effective_date === set.effective_date ? 'current' : view.scheduled.some((s) => s.effective_date === set.effective_date) ? 'scheduled' : 'past';
    return { status, price_set: set };
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
