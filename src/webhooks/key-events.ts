import type { OutboxEvent } from '../events/event.js';
import {
  type KeyRef,
  keyCreatedEvent,
  keyExpiringEvent,
  keyLeakedEvent,
  keyRevokedEvent,
  keyRotatedEvent,
  type LeakAction,
  type LeakSite,
} from '../events/keys.js';
import type { EventStore } from '../store/events/interface.js';
import type { KeyChange, StoredKey } from '../store/keys/interface.js';

const refOf = (accountId: string, key: StoredKey): KeyRef => ({
  account_id: accountId,
  key_id: key.id,
  key_name: key.name,
});

/**
 * Key changes as webhook events, enqueued in the store's outbox under deterministic ids (events/
 * keys.ts), so each is kept once whoever offers it. The one place key events are raised: the key
 * operations (admin API and CLI alike) hand every change here once the store has it, the leak
 * reports their findings, and the expiry check (key-expiry.ts) the keys it finds near their end.
 * Awaited by the caller, as price events are: a change whose event could not be written answers
 * with the store's failure.
 */
export class KeyEvents {
  constructor(
    private readonly store: Pick<EventStore, 'enqueueEvent'>,
    private readonly now: () => number,
    /** Called after an event was enqueued: the local worker looks at once (none in the CLI). */
    private readonly enqueued: () => void = () => undefined,
  ) {}

  async created({ account, key }: KeyChange): Promise<void> {
    await this.add(keyCreatedEvent(refOf(account.id, key), { hint: key.hint, expires_at: key.expires_at }, this.now()));
  }

  async revoked({ account, key }: KeyChange): Promise<void> {
    await this.add(keyRevokedEvent(refOf(account.id, key), this.now()));
  }

  /** `change.key` the new key, `change.previous` the old one with its new expiry. */
  async rotated({ account, key, previous }: KeyChange, graceS: number): Promise<void> {
    if (previous === undefined || previous.expires_at === null) return;
    const old = { key_id: previous.id, expires_at: previous.expires_at };
    await this.add(keyRotatedEvent(refOf(account.id, key), old, graceS, this.now()));
  }

  expiring(accountId: string, key: StoredKey & { expires_at: string }): Promise<boolean> {
    return this.add(keyExpiringEvent(refOf(accountId, key), key.expires_at, this.now()));
  }

  async leaked(accountId: string, key: StoredKey, site: LeakSite, action: LeakAction): Promise<void> {
    await this.add(keyLeakedEvent(refOf(accountId, key), site, action, this.now()));
  }

  /** True when the event is new to the outbox. */
  private async add(event: OutboxEvent): Promise<boolean> {
    const added = await this.store.enqueueEvent(event);
    if (added) this.enqueued();
    return added;
  }
}
