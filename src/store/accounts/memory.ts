import { GatewayError } from '../../failures.js';
import { copyKey } from '../keys/edit.js';
import type { MemoryData } from '../memory/state.js';
import { matchesFilter } from './filter.js';
import type {
  AccountFilter,
  AccountPage,
  AccountPatch,
  AccountStore,
  Grant,
  GrantLedger,
  StoredAccount,
} from './interface.js';

/** The accounts of the embedded store (memory/state.ts holds them). */
export class MemoryAccounts implements AccountStore {
  constructor(private readonly data: MemoryData) {}

  async findByKeyHash(keyHash: string): Promise<StoredAccount | null> {
    const id = this.data.byKeyHash.get(keyHash);
    return id === undefined ? null : this.copy(id);
  }

  async getAccount(id: string): Promise<StoredAccount | null> {
    return this.copy(id);
  }

  async createAccount(account: StoredAccount): Promise<void> {
    const d = this.data;
    const hashes = keyHashes(account);
    if (d.accounts.has(account.id) || hashes.some((h) => d.byKeyHash.has(h))) {
      throw new GatewayError('CONFLICT', `account ${account.id} or its key already exists`);
    }
    d.setAccount(copyAccount(account));
    for (const h of hashes) d.byKeyHash.set(h, account.id);
    await d.save();
    d.emit({ type: 'account', id: account.id, keyHashes: hashes });
  }

  async updateAccount(id: string, patch: AccountPatch): Promise<StoredAccount | null> {
    const d = this.data;
    const current = d.accounts.get(id);
    if (!current) return null;
    const { external_ids, burst, overage, status_reason, ...rest } = patch;
    const next: StoredAccount = { ...copyAccount(current), ...rest, revision: current.revision + 1 };
    if (status_reason === null) delete next.status_reason;
    else if (status_reason !== undefined) next.status_reason = status_reason;
    if (burst === null) delete next.burst;
    else if (burst !== undefined) next.burst = burst;
    if (overage === null) delete next.overage;
    else if (overage !== undefined) next.overage = overage;
    if (external_ids === null || (external_ids !== undefined && Object.keys(external_ids).length === 0))
      delete next.external_ids;
    else if (external_ids !== undefined) next.external_ids = external_ids;
    d.epoch++;
    d.setAccount(next);
    await d.save();
    d.emit({ type: 'account', id, keyHashes: keyHashes(next) });
    return copyAccount(next);
  }

  async listAccounts(filter: AccountFilter, after: string | null, limit: number): Promise<AccountPage> {
    // Code-unit order, as Redis orders its index (ids are ASCII): both stores page alike.
    const ids = [...this.data.accounts.keys()]
      .filter((id) => after === null || id > after)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const accounts: StoredAccount[] = [];
    for (const id of ids) {
      const a = this.data.accounts.get(id) as StoredAccount;
      if (!matchesFilter(a, filter)) continue;
      // One match past a full page: there is more, so the page ends with a cursor.
      if (accounts.length === limit) return { accounts, next: (accounts[limit - 1] as StoredAccount).id };
      accounts.push(copyAccount(a));
    }
    return { accounts, next: null };
  }

  async deleteAccount(id: string): Promise<StoredAccount | null> {
    const d = this.data;
    const current = d.accounts.get(id);
    if (!current) return null;
    d.epoch++;
    d.removeAccount(current);
    await d.save();
    d.emit({ type: 'account', id, keyHashes: keyHashes(current) });
    return copyAccount(current);
  }

  async addGrant(id: string, grant: Grant, ledger: GrantLedger): Promise<StoredAccount | null> {
    const d = this.data;
    const current = d.accounts.get(id);
    if (!current) return null;
    const kept = (current.grants ?? []).filter((g) => Number(g.period_id) >= ledger.dropBeforeMs);
    const next: StoredAccount = { ...current, grants: [...kept, grant], revision: current.revision + 1 };
    d.epoch++;
    d.setAccount(next);
    // The record as the period's first request would open it, in the same synchronous step.
    const counter = d.periodCounter(id, grant.period_id, ledger.expireAtMs);
    const { record } = ledger;
    counter.record ??= { ...record, limit: ledger.limit, changes: [] };
    counter.record.granted = (counter.record.granted ?? 0) + grant.requests;
    await d.save();
    d.emit({ type: 'account', id, keyHashes: keyHashes(next) });
    return copyAccount(next);
  }

  async listDeletedAccounts(after: string | null, limit: number): Promise<AccountPage> {
    const now = this.data.now();
    const ids = [...this.data.deleted.keys()]
      .filter((id) => after === null || id > after)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const accounts: StoredAccount[] = [];
    for (const id of ids) {
      const d = this.data.deleted.get(id) as { account: StoredAccount; untilMs: number };
      if (d.untilMs <= now) continue;
      if (accounts.length === limit) return { accounts, next: (accounts[limit - 1] as StoredAccount).id };
      accounts.push({ ...d.account });
    }
    return { accounts, next: null };
  }

  async getDeletedAccount(id: string): Promise<StoredAccount | null> {
    const d = this.data.deleted.get(id);
    return d !== undefined && d.untilMs > this.data.now() ? { ...d.account } : null;
  }

  private copy(id: string): StoredAccount | null {
    const a = this.data.accounts.get(id);
    return a ? copyAccount(a) : null;
  }
}

/** A copy the caller may change without changing the store's (keys included). */
export const copyAccount = (a: StoredAccount): StoredAccount => ({ ...a, keys: a.keys.map(copyKey) });

export const keyHashes = (a: StoredAccount): string[] => a.keys.map((k) => k.key_hash);
