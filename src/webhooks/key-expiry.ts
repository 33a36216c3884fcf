import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config-schema.js';
import type { AccountFilter } from '../store/accounts/interface.js';
import type { CoordinationStore } from '../store/coordination/interface.js';
import type { StoredKey } from '../store/keys/interface.js';
import type { Store } from '../store/store.js';
import { KeyEvents } from './key-events.js';

// How often the deployment looks for keys near their expiry, and the lease that makes one
// gateway do it at a time (held over two rounds, so a gateway that stops hands over within that).
export const EXPIRY_CHECK_EVERY_MS = 60_000;
const LEASE = 'key-expiry-check';
const PAGE = 500;

/** What the check reads: the accounts with their keys, page by page (AccountStore.listAccounts). */
export interface KeyedAccounts {
  listAccounts(
    filter: AccountFilter,
    after: string | null,
    limit: number,
  ): Promise<{ accounts: Array<{ id: string; keys: readonly StoredKey[] }>; next: string | null }>;
}

/** The parts of a KeyExpiryCheck: its constructor's options. */
export interface KeyExpiryCheckOptions {
  accounts: KeyedAccounts;
  coordination: Pick<CoordinationStore, 'lease' | 'releaseLease'>;
  events: KeyEvents;
  warningMs: number;
  clock: Clock;
  log: Logger;
}

/**
 * Raises `key.expiring` once per key, `keys.expiry_warning_days` before its `expires_at`. One
 * gateway of the deployment looks every minute (a lease), over every account's keys, off the
 * request path. Once: the event's id is the key's id and expiry (events/key-event-data.ts), so the outbox
 * keeps it once whichever gateway offers it and however often; an expiry moved is news again.
 * The outbox remembers ids for 30 days, longer than the longest warning (keys-config.ts caps it
 * at 30 days), and a key stops being offered the moment it expires.
 */
export class KeyExpiryCheck {
  private readonly holder = randomUUID();
  private timer: unknown = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  /**
   * Keys (id and expiry) inside their window that this gateway has offered already: the outbox
   * would drop them, but why ask. Only those still inside their window are kept.
   */
  private offered = new Set<string>();

  private readonly accounts: KeyedAccounts;
  private readonly coordination: Pick<CoordinationStore, 'lease' | 'releaseLease'>;
  private readonly events: KeyEvents;
  private readonly warningMs: number;
  private readonly clock: Clock;
  private readonly log: Logger;

  constructor(o: KeyExpiryCheckOptions) {
    this.accounts = o.accounts;
    this.coordination = o.coordination;
    this.events = o.events;
    this.warningMs = o.warningMs;
    this.clock = o.clock;
    this.log = o.log;
  }

  start(): void {
    this.schedule(0);
  }

  /** Stops looking, and hands the lease over: another gateway looks at its next minute. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    await this.running;
    await this.coordination.releaseLease(LEASE, this.holder).catch(() => undefined);
  }

  private schedule(ms: number): void {
    this.timer = this.clock.setTimeout(() => {
      this.running = this.round()
        .then(() => undefined)
        .catch((err: unknown) =>
          this.log.warn({ err: (err as Error).message }, 'key expiry check failed; it runs again in a minute'),
        )
        .finally(() => {
          this.running = null;
          if (!this.stopped) this.schedule(EXPIRY_CHECK_EVERY_MS);
        });
    }, ms);
  }

  /** One look over every key; returns how many events were offered. */
  async round(): Promise<number> {
    if (!(await this.coordination.lease(LEASE, this.holder, 2 * EXPIRY_CHECK_EVERY_MS))) return 0;
    let offered = 0;
    let after: string | null = null;
    const inWindow = new Set<string>();
    do {
      const page = await this.accounts.listAccounts({}, after, PAGE);
      for (const account of page.accounts)
        for (const key of account.keys)
          if (!replaced(key, account.keys) && (await this.offer(account.id, key, inWindow))) offered++;
      after = page.next;
    } while (after !== null && !this.stopped);
    if (after === null) this.offered = inWindow;
    return offered;
  }

  private async offer(accountId: string, key: StoredKey, inWindow: Set<string>): Promise<boolean> {
    if (key.expires_at === null) return false;
    const now = this.clock.now();
    const endsMs = Date.parse(key.expires_at);
    if (now < endsMs - this.warningMs || now >= endsMs) return false;
    const memo = `${key.id} ${key.expires_at}`;
    const known = this.offered.has(memo);
    if (!known) await this.events.expiring(accountId, { ...key, expires_at: key.expires_at });
    inWindow.add(memo);
    return !known;
  }
}

/**
 * A key rotated out: a key of its name added after it (its successor: a rotation appends one of
 * the same name) while it still worked. Its end is planned, and key.rotated said when; no warning.
 */
const replaced = (key: StoredKey, keys: readonly StoredKey[]): boolean =>
  key.expires_at !== null &&
  keys
    .slice(keys.indexOf(key) + 1)
    .some((k) => k.name === key.name && Date.parse(k.created_at) <= Date.parse(key.expires_at as string));

/** Starts the check in a gateway (never in the CLI); returns its stop. */
export function startKeyExpiryCheck(
  store: Store,
  config: Config,
  clock: Clock,
  log: Logger,
  enqueued: () => void,
): () => Promise<void> {
  const events = new KeyEvents(store.events, clock.now, enqueued);
  const warningMs = config.keys.expiry_warning_days * 86_400_000;
  const check = new KeyExpiryCheck({
    accounts: store.accounts,
    coordination: store.coordination,
    events,
    warningMs,
    clock,
    log,
  });
  check.start();
  return () => check.stop();
}
