import type { Clock } from '../clock.js';
import { GatewayError } from '../failures.js';
import { rotateKey } from '../keys/accounts.js';
import {
  type CreateKeyInput,
  type KeyView,
  newKey,
  type PatchKeyInput,
  publicKey,
  type RotateInput,
} from '../keys/api-keys.js';
import type { KeyChange, KeyStore, StoredKey } from '../store/store.js';
import type { Audit } from './audit.js';

export interface KeyOperationsDeps {
  keys: KeyStore;
  clock: Clock;
  audit: Audit;
  /** `usage.retention_days` in ms: expired keys are kept this long for the audit, then forgotten. */
  retentionMs: number;
}

/**
 * What a change did, for whoever reacts to it (the webhook events): the store's KeyChange, and
 * for a rotation its grace. Awaited: the change answers once its events are written.
 */
export type KeyChangeListener = (
  action: 'created' | 'updated' | 'rotated' | 'revoked',
  change: KeyChange,
  graceS?: number,
) => void | Promise<void>;

/**
 * An account's keys, for the admin API and the CLI alike (inputs checked by the schemas their
 * table entries name). Every change writes one audit line naming the account, the key ids and `from`, and
 * returns the store's KeyChange besides the answer, so a caller can raise events for it.
 */
export class KeyOperations {
  private readonly listeners: KeyChangeListener[] = [];

  constructor(private readonly d: KeyOperationsDeps) {}

  /** Called after every change, once the store has it. */
  onChange(listener: KeyChangeListener): void {
    this.listeners.push(listener);
  }

  async create(accountId: string, input: CreateKeyInput, from: string): Promise<{ key: KeyView; api_key: string }> {
    const now = this.d.clock.now();
    // A key born expired could never work: a mistyped year, not a wish (PATCH may expire a key now).
    if (input.expires_at != null && Date.parse(input.expires_at) <= now) {
      const line = `expires_at: expected a time in the future, got ${input.expires_at}`;
      throw new GatewayError('BAD_REQUEST', line, [line]);
    }
    await this.forget(accountId, now);
    const { stored, apiKey } = newKey(input, now);
    const change = await this.d.keys.addKey(accountId, stored);
    this.d.audit({ action: 'key.create', account_id: accountId, key_id: stored.id, from, after: audited(stored) });
    await this.changed('created', change);
    return { key: publicKey(change.key, now), api_key: apiKey };
  }

  async list(accountId: string): Promise<{ keys: KeyView[] }> {
    const now = this.d.clock.now();
    const keys = await this.d.keys.listKeys(accountId);
    if (keys === null) throw new GatewayError('NOT_FOUND', `no account with id ${accountId}`);
    return { keys: this.visible(keys, now).map((k) => publicKey(k, now)) };
  }

  async update(accountId: string, keyId: string, patch: PatchKeyInput, from: string): Promise<{ key: KeyView }> {
    const now = this.d.clock.now();
    const normalised =
      patch.expires_at == null ? patch : { ...patch, expires_at: new Date(Date.parse(patch.expires_at)).toISOString() };
    const change = await this.d.keys.updateKey(accountId, keyId, normalised);
    const fields = Object.keys(patch) as Array<keyof typeof patch>;
    const pick = (k: StoredKey | undefined): Record<string, unknown> =>
      Object.fromEntries(fields.map((f) => [f, k?.[f]]));
    this.d.audit({
      action: 'key.update',
      account_id: accountId,
      key_id: keyId,
      from,
      before: pick(change.previous),
      after: pick(change.key),
    });
    await this.changed('updated', change);
    return { key: publicKey(change.key, now) };
  }

  async revoke(accountId: string, keyId: string, from: string): Promise<KeyChange> {
    const change = await this.d.keys.revoke(accountId, keyId);
    this.d.audit({ action: 'key.revoke', account_id: accountId, key_id: keyId, from, before: audited(change.key) });
    await this.changed('revoked', change);
    return change;
  }

  async rotate(
    accountId: string,
    keyId: string,
    { grace_s }: RotateInput,
    from: string,
  ): Promise<{ key: KeyView; api_key: string; previous: KeyView }> {
    return this.rotateWith(accountId, keyId, grace_s, from);
  }

  /** The rotation itself, for the per-key route and the account's `rotate-key` alike. */
  async rotateWith(
    accountId: string,
    keyId: string,
    graceS: number,
    from: string,
    action: 'key.rotate' | 'account.rotate_key' = 'key.rotate',
  ): Promise<{ key: KeyView; api_key: string; previous: KeyView }> {
    const now = this.d.clock.now();
    await this.forget(accountId, now);
    const { change, api_key } = await rotateKey(this.d.keys, accountId, keyId, graceS, now);
    const previous = change.previous as StoredKey;
    this.d.audit({
      action,
      account_id: accountId,
      key_id: change.key.id,
      previous_key_id: previous.id,
      grace_s: graceS,
      from,
      after: { previous_expires_at: previous.expires_at },
    });
    await this.changed('rotated', change, graceS);
    return { key: publicKey(change.key, now), api_key, previous: publicKey(previous, now) };
  }

  /** Keys expired longer ago than the retention are no longer shown (the next change forgets them). */
  private visible(keys: StoredKey[], now: number): StoredKey[] {
    const cutoff = now - this.d.retentionMs;
    const shown = keys.filter((k) => k.expires_at === null || Date.parse(k.expires_at) >= cutoff);
    return shown.length > 0 ? shown : keys.slice(-1);
  }

  private async forget(accountId: string, now: number): Promise<void> {
    await this.d.keys.forgetExpired(accountId, now - this.d.retentionMs);
  }

  private async changed(action: Parameters<KeyChangeListener>[0], change: KeyChange, graceS?: number): Promise<void> {
    for (const l of this.listeners) await l(action, change, graceS);
  }
}

/** What an audit line says of a key: never its hash. */
const audited = (k: StoredKey): Record<string, unknown> => ({
  name: k.name,
  expires_at: k.expires_at,
  scopes: k.scopes,
  allowed_cidrs: k.allowed_cidrs,
});
