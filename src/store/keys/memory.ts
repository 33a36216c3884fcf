import { GatewayError } from '../../failures.js';
import type { StoredAccount } from '../accounts/interface.js';
import { copyAccount, keyHashes } from '../accounts/memory.js';
import type { MemoryData } from '../memory/state.js';
import { addKey, copyKey, type Edited, forgetExpired, revokeKey, rotateKey, updateKey } from './edit.js';
import type { AccountKey, KeyChange, KeyPatch, KeyStore, StoredKey } from './interface.js';

/** The keys of the embedded store: with their accounts (memory/state.ts), changed synchronously. */
export class MemoryKeys implements KeyStore {
  constructor(private readonly data: MemoryData) {}

  async findByKeyHash(keyHash: string): Promise<AccountKey | null> {
    const id = this.data.byKeyHash.get(keyHash);
    const stored = id === undefined ? undefined : this.data.accounts.get(id);
    const key = stored?.keys.find((k) => k.key_hash === keyHash);
    if (stored === undefined || key === undefined) return null;
    return { account: copyAccount(stored), key: copyKey(key) };
  }

  async listKeys(accountId: string): Promise<StoredKey[] | null> {
    return this.data.accounts.get(accountId)?.keys.map(copyKey) ?? null;
  }

  addKey(accountId: string, key: StoredKey): Promise<KeyChange> {
    return this.edit(accountId, (keys) => addKey(keys, accountId, key, this.data.now()));
  }

  updateKey(accountId: string, keyId: string, patch: KeyPatch): Promise<KeyChange> {
    return this.edit(accountId, (keys) => updateKey(keys, accountId, keyId, patch));
  }

  rotateKey(accountId: string, keyId: string, next: StoredKey, oldExpiresAt: string): Promise<KeyChange> {
    return this.edit(accountId, (keys) => rotateKey(keys, accountId, keyId, next, oldExpiresAt, this.data.now()));
  }

  revoke(accountId: string, keyId: string): Promise<KeyChange> {
    return this.edit(accountId, (keys) => revokeKey(keys, accountId, keyId, this.data.now()));
  }

  async markUsed(accountId: string, keyId: string, day: string): Promise<void> {
    const account = this.data.accounts.get(accountId);
    const key = account?.keys.find((k) => k.id === keyId);
    if (account === undefined || key === undefined) return;
    if (key.last_used_on === null || key.last_used_on < day) key.last_used_on = day;
    this.data.touchAccount(account);
  }

  async forgetExpired(accountId: string, beforeMs: number): Promise<StoredKey[]> {
    const account = this.data.accounts.get(accountId);
    if (account === undefined) return [];
    const { forgotten } = forgetExpired(account.keys, beforeMs);
    if (forgotten.length === 0) return [];
    await this.edit(accountId, (keys) => {
      const kept = forgetExpired(keys, beforeMs).keys;
      return { keys: kept, key: forgotten[0] as StoredKey };
    });
    return forgotten.map(copyKey);
  }

  /** One change of an account's keys: a new revision, the hashes' entries, and the announcement. */
  private async edit(accountId: string, change: (keys: StoredKey[]) => Edited): Promise<KeyChange> {
    const d = this.data;
    const current = d.accounts.get(accountId);
    if (!current) throw new GatewayError('NOT_FOUND', `no account with id ${accountId}`);
    const edited = change(current.keys);
    const before = new Set(keyHashes(current));
    const after = edited.keys.map((k) => k.key_hash);
    for (const h of after)
      if (!before.has(h) && d.byKeyHash.has(h)) throw new GatewayError('CONFLICT', `key hash ${h} is in use`);
    const next: StoredAccount = { ...current, keys: edited.keys.map(copyKey), revision: current.revision + 1 };
    d.epoch++;
    for (const h of before) if (!after.includes(h)) d.byKeyHash.delete(h);
    for (const h of after) d.byKeyHash.set(h, accountId);
    d.setAccount(next);
    await d.save();
    d.emit({ type: 'account', id: accountId, keyHashes: [...new Set([...before, ...after])] });
    const result: KeyChange = { account: copyAccount(next), key: copyKey(edited.key) };
    if (edited.previous !== undefined) result.previous = copyKey(edited.previous);
    return result;
  }
}
