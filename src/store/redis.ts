import { randomUUID } from 'node:crypto';
import type { Cluster, Redis, Result } from 'ioredis';
import type { Logger } from 'pino';
import { GatewayError } from '../errors.js';
import type { PriceSet } from '../prices/schema.js';
import { matchesFilter } from './accounts/filter.js';
import {
  CONSUME,
  CREATE_ACCOUNT,
  DELETE_ACCOUNT,
  DELETE_PRICE_SET,
  INVALID_KEY,
  LEASE,
  PUT_PRICE_SET,
  PUT_PRICE_SETS,
  REFUND,
  RELEASE_LEASE,
  UPDATE_ACCOUNT,
} from './counting/lua.js';
import { ConsumeBatcher } from './counting/redis-batch.js';
import { RedisClock } from './counting/redis-clock.js';
import { decodeAccount, encodeAccount, encodePatch, pairsToRecord, parseEvent } from './redis/codec.js';
import {
  connect,
  mastersConnected,
  quit,
  type RedisStoreOptions,
  retryDelay,
  subscriberConnection,
} from './redis/connection.js';
import type {
  AccountFilter,
  AccountPage,
  AccountPatch,
  ConsumeReceiver,
  ConsumeResult,
  ConsumeSpec,
  Store,
  StoredAccount,
  StoreEvent,
  ThrottleRule,
} from './types.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    fpgConsume(numKeys: number, ...keysAndArgs: Array<string | number>): Result<number[], Context>;
    fpgInvalidKey(
      attempts: string,
      windowMs: number,
      max: number,
      channel: string,
      message: string,
    ): Result<number, Context>;
    fpgCreateAccount(account: string, channel: string, message: string, ...fields: string[]): Result<number, Context>;
    fpgUpdateAccount(
      account: string,
      channel: string,
      id: string,
      patch: string,
    ): Result<[string, string[]] | null, Context>;
    fpgPutPriceSet(
      prices: string,
      date: string,
      json: string,
      replace: string,
      channel: string,
      message: string,
    ): Result<number, Context>;
    fpgPutPriceSets(
      prices: string,
      replace: string,
      channel: string,
      message: string,
      ...datesAndJson: string[]
    ): Result<number, Context>;
    fpgDeletePriceSet(prices: string, date: string, channel: string, message: string): Result<number, Context>;
    fpgDeleteAccount(account: string, channel: string, id: string): Result<string[] | null, Context>;
    fpgRefund(counter: string): Result<number, Context>;
    fpgLease(key: string, holder: string, ttlMs: number): Result<number, Context>;
    fpgReleaseLease(key: string, holder: string): Result<number, Context>;
  }
}

export type { RedisStoreOptions };

// CONSUME takes a variable number of keys (a batch), so its key count comes with each call.
const SCRIPTS = {
  fpgConsume: { lua: CONSUME },
  fpgCreateAccount: { lua: CREATE_ACCOUNT, numberOfKeys: 1 },
  fpgUpdateAccount: { lua: UPDATE_ACCOUNT, numberOfKeys: 1 },
  fpgPutPriceSet: { lua: PUT_PRICE_SET, numberOfKeys: 1 },
  fpgPutPriceSets: { lua: PUT_PRICE_SETS, numberOfKeys: 1 },
  fpgDeletePriceSet: { lua: DELETE_PRICE_SET, numberOfKeys: 1 },
  fpgDeleteAccount: { lua: DELETE_ACCOUNT, numberOfKeys: 1 },
  fpgRefund: { lua: REFUND, numberOfKeys: 1 },
  fpgInvalidKey: { lua: INVALID_KEY, numberOfKeys: 1 },
  fpgLease: { lua: LEASE, numberOfKeys: 1 },
  fpgReleaseLease: { lua: RELEASE_LEASE, numberOfKeys: 1 },
};

/**
 * Delivered after the subscriber reconnects, since announcements sent while it was away are lost:
 * reload prices, and account id '*' means "forget every cached account".
 */
// A listing reads the index in chunks and each account of a chunk; it stops after this many
// index entries even when the page is not full, so a filter that matches little stays cheap.
const LIST_CHUNK = 200;
const LIST_MAX_EXAMINED = 5000;

const CLOCK_EVERY_MS = 60_000;

const resync = (): StoreEvent[] => [{ type: 'prices' }, { type: 'account', id: '*', keyHashes: [] }];

/**
 * The shared store on Redis (standalone, Sentinel or Cluster). Fails fast: no offline queue, a
 * command timeout and no retries (redis-connection.ts), so every method rejects with
 * STORE_UNAVAILABLE within about `command_timeout_ms` while Redis is down or slow, and works
 * again once it is back. Consumes of one event-loop turn share one script call
 * (redis-batch.ts); on a Cluster each request keeps its own call.
 *
 * Keys (prefix `fpg:` by default); all keys of one account share the hash tag `{acct:ID}`:
 *   fpg:{acct:ID}:account      hash of the StoredAccount fields (a null limit is an absent field)
 *   fpg:{acct:ID}:used:PERIOD  request counter of one period, expiring at period end + retention
 *   fpg:keyhash:HASH           account id of a key hash
 *   fpg:accounts               sorted set of every account id (score 0, read in id order with
 *                              ZRANGEBYLEX): the listing's index. One key, so on a Cluster one
 *                              node holds it; it is written by its own command, never inside a
 *                              script with an account's keys (other slot). An entry may outlive its
 *                              account (written before it, removed after it): listing skips those.
 *   fpg:prices                 hash effective_date → JSON of the price set
 *   fpg:invalid:ADDRESS        invalid keys from one client address within the throttle's window
 *   fpg:marker                 written by the first gateway; gone or changed: Redis lost its data
 *   fpg:note:NAME              shared records: the upstream poller's lease (lease:upstream-poll) and status
 *   fpg:events                 pub/sub channel of StoreEvent JSON
 */
export class RedisStore implements Store {
  readonly kind = 'redis';
  private readonly redis: Redis | Cluster;
  private readonly channel: string;
  private readonly prices: string;
  private readonly accountIndex: string;
  private readonly log: Logger;
  private readonly listeners: Array<(event: StoreEvent) => void> = [];
  private readonly batcher: ConsumeBatcher;
  private readonly clock: RedisClock;
  private clockTimer: NodeJS.Timeout | undefined;
  /** The value of the marker key as this process first saw it; see checkMarker. */
  private marker: string | null = null;
  private lost = false;
  private subscriber: Redis | null = null;
  private subscribedBefore = false;
  private firstSubscribed: (() => void) | undefined;
  private reopenTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** While the store starts (first connection, first subscription), calls wait for this. */
  private gate: Promise<unknown> | null = null;

  constructor(
    private readonly options: RedisStoreOptions,
    log: Logger,
  ) {
    this.log = log.child({ component: 'redis-store' });
    this.channel = `${options.key_prefix}events`;
    this.prices = `${options.key_prefix}prices`;
    this.accountIndex = `${options.key_prefix}accounts`;
    this.redis = connect(options);
    for (const [name, definition] of Object.entries(SCRIPTS)) this.redis.defineCommand(name, definition);
    this.clock = new RedisClock(options.command_timeout_ms);
    this.batcher = new ConsumeBatcher(
      (spec) => [this.accountKey(spec.accountId), this.counterKey(spec.accountId, spec.periodId)],
      (numKeys, keysAndArgs) => this.run(() => this.redis.fpgConsume(numKeys, ...keysAndArgs)),
      options.cluster !== undefined,
      (err) => this.log.error({ err }, 'a metered request failed after its consume'),
      // Cluster nodes' clocks are not this connection's: no deadline there.
      options.cluster ? undefined : () => this.clock.deadline(),
    );
    if (!options.cluster) this.keepClock();
    this.watch(this.redis, 'commands');
    this.redis.on('ready', () => void this.checkMarker());
    // Without an offline queue, a command sent before the first connection is ready would fail.
    this.holdCallsUntil(
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`not connected within ${options.connect_timeout_ms} ms`)),
          options.connect_timeout_ms,
        ).unref();
        this.redis.once('ready', () => {
          void mastersConnected(this.redis).then(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }),
    );
  }

  findByKeyHash(keyHash: string): Promise<StoredAccount | null> {
    return this.run(async () => {
      const id = await this.redis.get(this.indexKey(keyHash));
      if (id === null) return null;
      const account = decodeAccount(await this.redis.hgetall(this.accountKey(id)));
      // While a key is rotated the old index entry outlives the switch by one command: the
      // account itself says which key is current.
      return account?.key_hash === keyHash ? account : null;
    });
  }

  getAccount(id: string): Promise<StoredAccount | null> {
    return this.run(async () => decodeAccount(await this.redis.hgetall(this.accountKey(id))));
  }

  createAccount(account: StoredAccount): Promise<void> {
    const index = this.indexKey(account.key_hash);
    const message = JSON.stringify({ type: 'account', id: account.id, keyHashes: [account.key_hash] });
    return this.run(async () => {
      if ((await this.redis.set(index, account.id, 'NX')) === null) {
        throw new GatewayError('CONFLICT', `an account with key hash ${account.key_hash} already exists`);
      }
      // Listed before it exists, so no account is ever missing from the listing; an entry whose
      // account was never written is skipped there. Kept on refusal: the id's account exists.
      await this.redis.zadd(this.accountIndex, 0, account.id);
      // Only a definite refusal removes the key-hash entry: after a timeout the account may exist,
      // and an entry naming an account with another key hash finds nothing anyway.
      if (
        (await this.redis.fpgCreateAccount(
          this.accountKey(account.id),
          this.channel,
          message,
          ...encodeAccount(account),
        )) === 0
      ) {
        await this.redis.del(index);
        throw new GatewayError('CONFLICT', `account ${account.id} already exists`);
      }
    });
  }

  updateAccount(id: string, patch: AccountPatch): Promise<StoredAccount | null> {
    const newHash = patch.key_hash;
    return this.run(async () => {
      // The new key's index entry is written first, so the key works the moment the account names it.
      if (newHash !== undefined && (await this.redis.set(this.indexKey(newHash), id, 'NX')) === null) {
        if ((await this.redis.get(this.indexKey(newHash))) !== id) {
          throw new GatewayError('CONFLICT', `key hash ${newHash} belongs to another account`);
        }
      }
      const reply = await this.redis.fpgUpdateAccount(
        this.accountKey(id),
        this.channel,
        id,
        JSON.stringify(encodePatch(patch)),
      );
      if (reply === null) {
        if (newHash !== undefined) await this.redis.del(this.indexKey(newHash));
        return null;
      }
      const [previous, fields] = reply;
      const updated = decodeAccount(pairsToRecord(fields));
      if (!updated) throw new Error(`account ${id} came back unreadable`);
      if (previous !== updated.key_hash) await this.redis.del(this.indexKey(previous));
      return updated;
    });
  }

  listAccounts(filter: AccountFilter, after: string | null, limit: number): Promise<AccountPage> {
    return this.run(async () => {
      const accounts: StoredAccount[] = [];
      let last = after;
      for (let examined = 0; examined < LIST_MAX_EXAMINED; ) {
        const ids = await this.redis.zrangebylex(
          this.accountIndex,
          last === null ? '-' : `(${last}`,
          '+',
          'LIMIT',
          0,
          LIST_CHUNK,
        );
        // Each account is its own command, routed to its node on a Cluster (auto-pipelined).
        const records = await Promise.all(ids.map((id) => this.redis.hgetall(this.accountKey(id))));
        for (const [i, id] of ids.entries()) {
          const account = decodeAccount(records[i] as Record<string, string>);
          if (account === null || !matchesFilter(account, filter)) {
            last = id;
            continue;
          }
          // One match past a full page: there is more, so the page ends with a cursor.
          if (accounts.length === limit) return { accounts, next: (accounts[limit - 1] as StoredAccount).id };
          accounts.push(account);
          last = id;
        }
        if (ids.length < LIST_CHUNK) return { accounts, next: null };
        examined += ids.length;
      }
      return { accounts, next: last };
    });
  }

  deleteAccount(id: string): Promise<StoredAccount | null> {
    return this.run(async () => {
      const fields = await this.redis.fpgDeleteAccount(this.accountKey(id), this.channel, id);
      if (fields === null) return null;
      const deleted = decodeAccount(pairsToRecord(fields));
      // The key stopped working with the script (findByKeyHash checks the account); these only tidy up.
      if (deleted?.key_hash) await this.redis.del(this.indexKey(deleted.key_hash));
      await this.redis.zrem(this.accountIndex, id);
      return deleted;
    });
  }

  consume(spec: ConsumeSpec): Promise<ConsumeResult> {
    return new Promise((resolve, reject) => this.batcher.add(spec, { consumed: resolve, failed: reject }));
  }

  consumeInto(spec: ConsumeSpec, receiver: ConsumeReceiver): void {
    this.batcher.add(spec, receiver);
  }

  /** Consume script calls sent so far (each carries one or more requests). */
  consumeCalls(): number {
    return this.batcher.calls;
  }

  refund(accountId: string, periodId: string): Promise<void> {
    return this.run(async () => {
      await this.redis.fpgRefund(this.counterKey(accountId, periodId));
    });
  }

  usage(accountId: string, periodId: string): Promise<number> {
    return this.run(async () => Number((await this.redis.get(this.counterKey(accountId, periodId))) ?? 0));
  }

  listPriceSets(): Promise<PriceSet[]> {
    return this.run(async () => {
      return Object.entries(await this.redis.hgetall(this.prices))
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([, json]) => JSON.parse(json) as PriceSet);
    });
  }

  putPriceSet(set: PriceSet, replace: boolean): Promise<boolean> {
    const message = JSON.stringify({ type: 'prices' });
    return this.run(async () => {
      const stored = await this.redis.fpgPutPriceSet(
        this.prices,
        set.effective_date,
        JSON.stringify(set),
        replace ? '1' : '0',
        this.channel,
        message,
      );
      return stored === 1;
    });
  }

  putPriceSets(sets: PriceSet[], replace: boolean): Promise<number> {
    const message = JSON.stringify({ type: 'prices' });
    const args = sets.flatMap((set) => [set.effective_date, JSON.stringify(set)]);
    return this.run(() => this.redis.fpgPutPriceSets(this.prices, replace ? '1' : '0', this.channel, message, ...args));
  }

  deletePriceSet(date: string): Promise<boolean> {
    const message = JSON.stringify({ type: 'prices' });
    return this.run(async () => (await this.redis.fpgDeletePriceSet(this.prices, date, this.channel, message)) === 1);
  }

  subscribe(listener: (event: StoreEvent) => void): void {
    this.listeners.push(listener);
    if (this.subscriber || this.closed) return;
    // Changes this instance makes after subscribe() returns must reach the listener, so calls
    // wait for the subscription (at most connect_timeout_ms; a late one is followed by a resync).
    const subscribed = new Promise<void>((resolve) => (this.firstSubscribed = resolve));
    const patience = new Promise<void>((resolve) => setTimeout(resolve, this.options.connect_timeout_ms).unref());
    this.holdCallsUntil(Promise.all([this.gate, Promise.race([subscribed, patience])]));
    this.listen(0, 0);
  }

  lease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.run(async () => (await this.redis.fpgLease(this.noteKey(`lease:${name}`), holder, ttlMs)) === 1);
  }

  releaseLease(name: string, holder: string): Promise<void> {
    return this.run(async () => {
      await this.redis.fpgReleaseLease(this.noteKey(`lease:${name}`), holder);
    });
  }

  putNote(name: string, value: string): Promise<void> {
    return this.run(async () => {
      await this.redis.set(this.noteKey(name), value);
    });
  }

  getNote(name: string): Promise<string | null> {
    return this.run(() => this.redis.get(this.noteKey(name)));
  }

  reportInvalidKey(address: string, rule: ThrottleRule): Promise<void> {
    const announcement = JSON.stringify({ type: 'blocked', address, ms: rule.blockMs });
    return this.run(async () => {
      const key = `${this.options.key_prefix}invalid:${address}`;
      await this.redis.fpgInvalidKey(key, rule.windowMs, rule.maxAttempts, this.channel, announcement);
    });
  }

  ping(): Promise<void> {
    return this.run(async () => {
      await this.redis.ping();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reopenTimer);
    clearInterval(this.clockTimer);
    this.listeners.length = 0;
    await Promise.all([quit(this.redis), this.subscriber && quit(this.subscriber)]);
  }

  private accountKey(id: string): string {
    return `${this.options.key_prefix}{acct:${id}}:account`;
  }

  private counterKey(id: string, periodId: string): string {
    return `${this.options.key_prefix}{acct:${id}}:used:${periodId}`;
  }

  private noteKey(name: string): string {
    return `${this.options.key_prefix}note:${name}`;
  }

  private indexKey(keyHash: string): string {
    return `${this.options.key_prefix}keyhash:${keyHash}`;
  }

  private run<T>(op: () => Promise<T>): Promise<T> {
    return (this.gate ? this.gate.then(op) : op()).catch(unavailable);
  }

  private holdCallsUntil(ready: Promise<unknown>): void {
    const gate: Promise<unknown> = ready.finally(() => {
      if (this.gate === gate) this.gate = null;
    });
    gate.catch(() => undefined);
    this.gate = gate;
  }

  /**
   * Opens the dedicated subscriber connection. It subscribes on every `ready` (rather than
   * ioredis' automatic resubscription) so that a reconnect is known, and flushes caches then.
   * On a cluster it is a plain connection to one configured node (PUBLISH reaches every node);
   * when that node is lost it moves on to the next.
   */
  private listen(node: number, failures: number): void {
    const sub = subscriberConnection(this.redis, this.options, node);
    this.subscriber = sub;
    this.watch(sub, 'subscriber');
    let wasReady = false;
    sub.on('message', (_channel: string, text: string) => {
      const event = parseEvent(text);
      if (event) this.deliver(event);
      else this.log.warn({ channel: this.channel }, 'ignored a malformed store announcement');
    });
    sub.on('ready', () => {
      wasReady = true;
      sub.subscribe(this.channel).then(
        () => {
          if (this.subscribedBefore) for (const e of resync()) this.deliver(e);
          else this.firstSubscribed?.();
          this.subscribedBefore = true;
        },
        () => sub.disconnect(true),
      );
    });
    // Only a cluster subscriber ends by itself (it does not retry its node): try the next node.
    sub.once('end', () => {
      if (this.closed) return;
      const next = wasReady ? 0 : failures + 1;
      this.reopenTimer = setTimeout(() => this.listen(node + 1, next), retryDelay(next));
    });
  }

  dataLost(): boolean {
    return this.lost;
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
      if (this.marker !== null && found !== this.marker && !this.lost) {
        this.lost = true;
        this.log.error(
          { marker: key },
          'redis lost its data: accounts and counters are gone (restore them from a backup, or re-create the accounts and restart)',
        );
      }
      this.marker ??= found;
    } catch (err) {
      this.log.warn({ err }, 'could not check the redis data marker');
    }
  }

  /** Measures Redis' clock on every connection (a failover may bring another clock) and every minute. */
  private keepClock(): void {
    const measure = (): void => void this.clock.measure(() => this.redis.time()).catch(() => undefined);
    this.redis.on('ready', measure);
    this.clockTimer = setInterval(measure, CLOCK_EVERY_MS).unref();
  }

  private deliver(event: StoreEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.log.error({ err, event }, 'store event listener failed');
      }
    }
  }

  /** Every connection needs an 'error' listener or ioredis' errors crash the process; log once per outage. */
  private watch(connection: Redis | Cluster, name: string): void {
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
}

function unavailable(err: unknown): never {
  if (err instanceof GatewayError) throw err;
  throw new GatewayError(
    'STORE_UNAVAILABLE',
    `Redis store unavailable: ${err instanceof Error ? err.message : String(err)}`,
  );
}
