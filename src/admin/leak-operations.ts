import type { Clock } from '../clock.js';
import type { LeakAction } from '../events/keys.js';
import { isGatewayError } from '../failures.js';
import { isWellFormedKey } from '../key-format.js';
import { hashKey } from '../keys/keys.js';
import type { AccountKey, KeyStore } from '../store/keys/interface.js';
import type { KeyEvents } from '../webhooks/key-events.js';
import type { Audit } from './audit.js';

/** One token of a leak report, as the secret-scanning route has checked it. */
export interface LeakedToken {
  token: string;
  url: string;
  source: string;
}

export interface LeakOperationsDeps {
  keys: Pick<KeyStore, 'findByKeyHash'>;
  /** Revokes a key as the admin API does: its audit line and its key.revoked event. */
  revoke(accountId: string, keyId: string, from: string): Promise<unknown>;
  /** Sets a key's expiry as the admin API does: for an account's last key, which cannot be revoked. */
  expire(accountId: string, keyId: string, at: string, from: string): Promise<unknown>;
  events: KeyEvents;
  audit: Audit;
  clock: Clock;
  /** `secret_scanning.action`. */
  action: LeakAction;
}

/**
 * Leak reports (GitHub's secret scanning): each token that is a live key of ours is revoked at
 * once (or only reported, `secret_scanning.action: notify`), written to the audit log with where
 * it was found, and told as a `key.leaked` event. A token reported twice in one report is looked
 * up and revoked once, and told once per place.
 */
export class LeakOperations {
  constructor(private readonly d: LeakOperationsDeps) {}

  /** For each token, whether it was a live key when the report came. */
  async report(tokens: readonly LeakedToken[], from: string): Promise<boolean[]> {
    const found = new Map<string, AccountKey | null>();
    const live: boolean[] = [];
    for (const t of tokens) {
      // Only our shape can be ours: anything else is answered without a lookup.
      if (!isWellFormedKey(t.token)) {
        live.push(false);
        continue;
      }
      const hash = hashKey(t.token);
      let hit = found.get(hash);
      if (hit === undefined) {
        hit = await this.liveKey(hash);
        found.set(hash, hit);
        if (hit !== null && this.d.action === 'revoke') await this.stop(hit, from);
      }
      live.push(hit !== null);
      if (hit === null) continue;
      const { account, key } = hit;
      this.d.audit({
        action: 'key.leak',
        account_id: account.id,
        key_id: key.id,
        url: t.url,
        source: t.source,
        from,
        after: { action: this.d.action },
      });
      await this.d.events.leaked(account.id, key, { url: t.url, source: t.source }, this.d.action);
    }
    return live;
  }

  /** The account and key of a hash while the key works; an expired key is no longer a secret. */
  private async liveKey(hash: string): Promise<AccountKey | null> {
    const hit = await this.d.keys.findByKeyHash(hash);
    if (hit === null) return null;
    const { expires_at } = hit.key;
    return expires_at === null || Date.parse(expires_at) > this.d.clock.now() ? hit : null;
  }

  /** Revoked; an account's last key, which stays, expires now instead (401 API key has expired.). */
  private async stop({ account, key }: AccountKey, from: string): Promise<void> {
    try {
      await this.d.revoke(account.id, key.id, from);
    } catch (err) {
      // Revoked meanwhile (the same token in a report sent twice at once): done already.
      if (isGatewayError(err, 'NOT_FOUND')) return;
      if (!isGatewayError(err, 'CONFLICT')) throw err;
      await this.d.expire(account.id, key.id, new Date(this.d.clock.now()).toISOString(), from);
    }
  }
}
