import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import { GatewayError } from '../../failures.js';
import { connect, mastersConnected, type RedisStoreOptions } from './connection.js';

/** A concern's scripts, as ioredis' defineCommand takes them. */
export type Scripts = Record<string, { lua: string; numberOfKeys?: number }>;

/** How soon a marker check that failed on a ready connection is tried again. */
const MARKER_RETRY_MS = 1_000;

/**
 * What the Redis implementations of the six store concerns (accounts, counting, prices,
 * coordination, events, billing) share: one command connection, the key layout, the
 * announcement channel, and the gate that holds calls while the store starts. Fails fast: no
 * offline queue, a command timeout and no retries (connection.ts), so every call through `run`
 * rejects with STORE_UNAVAILABLE within about `command_timeout_ms` while Redis is down or slow,
 * and works again once it is back.
 *
 * Keys (prefix `fpg:` by default); all keys of one account share the hash tag `{acct:ID}`:
 *   fpg:{acct:ID}:account      hash of the StoredAccount fields (a null limit is an absent field;
 *                              `keys` as JSON, `lu:KEYID` the day that key last worked,
 *                              `ledger_day` `ledger_days` the ledger's last marked day)
 *   fpg:{acct:ID}:used:PERIOD  request counter of one period, expiring at period end + retention
 *   fpg:{acct:ID}:days:PERIOD  the period's ledger: a mark per day (`@YYYY-MM-DD`, the count its
 *                              requests start at; counting/ledger-lua.ts), or a count per day
 *                              (`YYYY-MM-DD`, the earlier layout), and its record (plan, kind,
 *                              limit, start, end, changes); same expiry as the counter
 *   fpg:{acct:ID}:periods      sorted set of the account's period ids (score: their expiry); the
 *                              key expires with the last of them
 *   fpg:{acct:ID}:deleted      a deleted account's fields, kept while its period records are
 *                              (so the exports name it); written by the delete script
 *   fpg:keyhash:HASH           account id of a key hash
 *   fpg:accounts               sorted set of every account id (score 0, read in id order with
 *                              ZRANGEBYLEX): the listing's index. One key, so on a Cluster one
 *                              node holds it; it is written by its own command, never inside a
 *                              script with an account's keys (other slot). An entry may outlive its
 *                              account (written before it, removed after it): listing skips those.
 *   fpg:deleted-accounts       sorted set of deleted account ids (score 0), as fpg:accounts: the
 *                              exports' index of accounts whose records outlive them. An entry
 *                              with neither its account nor its `deleted` key is stale (its records
 *                              expired) and removed when an export meets it
 *   fpg:prices                 hash effective_date → JSON of the price set
 *   fpg:invalid:ADDRESS        invalid keys and reserved attempts from one client address within
 *                              the throttle's window, or its block (coordination/lua.ts)
 *   fpg:marker                 written by the first gateway; gone or changed: Redis lost its data
 *   fpg:note:NAME              shared records: the upstream poller's lease (lease:upstream-poll) and status
 *   fpg:events                 pub/sub channel of StoreEvent JSON
 */
export class RedisBackend {
  readonly redis: Redis | Cluster;
  readonly log: Logger;
  readonly channel: string;
  readonly prices: string;
  readonly accountIndex: string;
  readonly deletedIndex: string;
  closed = false;
  /** While the store starts (first connection, first subscription), calls wait for this. */
  private gate: Promise<unknown> | null = null;
  /** The value of the marker key as this process first saw it; see checkMarker. */
  private marker: string | null = null;
  /** When (wall clock) the loss was found, or null. */
  private lostAt: number | null = null;
  /** The last marker check failed (logged once until one succeeds). */
  private markerUnchecked = false;
  /** What else the start waits for once the command connection is up (the consume connection). */
  private readonly alsoReady: Array<() => Promise<void>> = [];

  constructor(
    readonly options: RedisStoreOptions,
    log: Logger,
  ) {
    this.log = log.child({ component: 'redis-store' });
    this.channel = `${options.key_prefix}events`;
    this.prices = `${options.key_prefix}prices`;
    this.accountIndex = `${options.key_prefix}accounts`;
    this.deletedIndex = `${options.key_prefix}deleted-accounts`;
    this.redis = connect(options);
  }

  /**
   * Each concern defines its own scripts on the shared connection. On a Cluster, autopipelining
   * groups a call by its first argument as a key: a script that takes its key count first is kept
   * out of it, or calls of different slots would share a pipeline that the Cluster refuses.
   */
  define(scripts: Scripts): void {
    for (const [name, definition] of Object.entries(scripts)) {
      this.redis.defineCommand(name, definition);
      if (this.options.cluster && definition.numberOfKeys === undefined)
        this.redis.options.autoPipeliningIgnoredCommands?.push(name);
    }
  }

  /**
   * Called once every concern is set up (their 'ready' listeners come first, as they did when the
   * store was one class): watches the connection, checks the data marker on every connection, and
   * holds calls until the first connection is ready.
   */
  start(): void {
    this.watch(this.redis, 'commands');
    this.redis.on('ready', () => void this.checkMarker());
    // Without an offline queue, a command sent before the first connection is ready would fail.
    this.holdCallsUntil(
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`not connected within ${this.options.connect_timeout_ms} ms`)),
          this.options.connect_timeout_ms,
        ).unref();
        this.redis.once('ready', () => {
          void mastersConnected(this.redis)
            .then(() => Promise.all(this.alsoReady.map((ready) => ready())))
            .then(() => {
              clearTimeout(timer);
              resolve();
            });
        });
      }),
    );
  }

  /** The start holds calls until `ready` resolves too (it is asked once the command connection is up). */
  startsWith(ready: () => Promise<void>): void {
    this.alsoReady.push(ready);
  }

  accountKey(id: string): string {
    return `${this.options.key_prefix}{acct:${id}}:account`;
  }

  counterKey(id: string, periodId: string): string {
    return `${this.options.key_prefix}{acct:${id}}:used:${periodId}`;
  }

  daysKey(id: string, periodId: string): string {
    return `${this.options.key_prefix}{acct:${id}}:days:${periodId}`;
  }

  deletedKey(id: string): string {
    return `${this.options.key_prefix}{acct:${id}}:deleted`;
  }

  periodsKey(id: string): string {
    return `${this.options.key_prefix}{acct:${id}}:periods`;
  }

  noteKey(name: string): string {
    return `${this.options.key_prefix}note:${name}`;
  }

  indexKey(keyHash: string): string {
    return `${this.options.key_prefix}keyhash:${keyHash}`;
  }

  /** Runs a call once the gate is open; any failure that is not already ours is STORE_UNAVAILABLE. */
  run<T>(op: () => Promise<T>): Promise<T> {
    return (this.gate ? this.gate.then(op) : op()).catch(unavailable);
  }

  /** The gate now in force, for a later hold to wait for as well. */
  currentGate(): Promise<unknown> | null {
    return this.gate;
  }

  holdCallsUntil(ready: Promise<unknown>): void {
    const gate: Promise<unknown> = ready.finally(() => {
      if (this.gate === gate) this.gate = null;
    });
    gate.catch(() => undefined);
    this.gate = gate;
  }

  msSinceDataLoss(): number | null {
    return this.lostAt === null ? null : Date.now() - this.lostAt;
  }

  /** Every connection needs an 'error' listener or ioredis' errors crash the process; log once per outage. */
  watch(connection: Redis | Cluster, name: string): void {
    let down = false;
    connection.on('error', (err: Error) => {
      if (!down && !this.closed) this.log.warn({ err, connection: name }, 'redis connection failed; retrying');
      down = true;
    });
    connection.on('ready', () => {
      if (down) this.log.info({ connection: name }, 'redis connection restored');
      down = false;
    });
  }

  /**
   * Redis keeps a marker key, written by the first gateway to find none. A marker gone or changed
   * on a reconnect means Redis lost its data (restarted without persistence, failed over to an
   * empty replica): accounts and counters are gone, and nothing else would say so. The first to
   * notice writes a new marker, so every other gateway notices too.
   */
  private async checkMarker(): Promise<void> {
    const key = `${this.options.key_prefix}marker`;
    try {
      await this.redis.set(key, randomUUID(), 'NX');
      const found = await this.redis.get(key);
      if (this.marker !== null && found !== this.marker && this.lostAt === null) {
        this.lostAt = Date.now();
        this.log.error(
          { marker: key },
          'redis lost its data: accounts and counters are gone (restore them from a backup, or re-create the accounts); ' +
            'meanwhile unknown keys do not count towards the invalid-key throttle for limits.invalid_key_throttle.paused_after_data_loss_s',
        );
      }
      this.marker ??= found;
      this.markerUnchecked = false;
    } catch (err) {
      // A store closed while the check was in flight (a CLI command refused after it connected) has nothing to warn of.
      if (this.closed) return;
      if (!this.markerUnchecked) this.log.warn({ err }, 'could not check the redis data marker; trying again');
      this.markerUnchecked = true;
      // A check that timed out on a busy Redis would otherwise wait for the next reconnect, and a
      // loss found then or never. A connection that drops checks again on its next 'ready'.
      setTimeout(() => {
        if (!this.closed && this.redis.status === 'ready') void this.checkMarker();
      }, MARKER_RETRY_MS).unref();
    }
  }
}

function unavailable(err: unknown): never {
  throw storeUnavailable(err);
}

/** A failure as the store's callers get it: STORE_UNAVAILABLE, unless it is already ours. */
export function storeUnavailable(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return new GatewayError(
    'STORE_UNAVAILABLE',
    `Redis store unavailable: ${err instanceof Error ? err.message : String(err)}`,
  );
}
