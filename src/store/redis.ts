import { readFileSync } from 'node:fs';
import { Cluster, Redis, type RedisOptions, type Result } from 'ioredis';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Config } from '../config/schema.js';
import { GatewayError } from '../errors.js';
import type { PriceSet } from '../prices/schema.js';
import { CONSUME, CREATE_ACCOUNT, LEASE, PUT_PRICE_SET, REFUND, RELEASE_LEASE, UPDATE_ACCOUNT } from './lua.js';
import type { AccountPatch, ConsumeResult, ConsumeSpec, Store, StoreEvent, StoredAccount } from './types.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    fpgConsume(account: string, counter: string, revision: number, limit: number, expireAtMs: number): Result<[string, number], Context>;
    fpgCreateAccount(account: string, channel: string, message: string, ...fields: string[]): Result<number, Context>;
    fpgUpdateAccount(account: string, channel: string, id: string, patch: string): Result<[string, string[]] | null, Context>;
    fpgPutPriceSet(prices: string, date: string, json: string, replace: string, channel: string, message: string): Result<number, Context>;
    fpgRefund(counter: string): Result<number, Context>;
    fpgLease(key: string, holder: string, ttlMs: number): Result<number, Context>;
    fpgReleaseLease(key: string, holder: string): Result<number, Context>;
  }
}

export type RedisStoreOptions = Config['store']['redis'];

const SCRIPTS = {
  fpgConsume: { lua: CONSUME, numberOfKeys: 2 },
  fpgCreateAccount: { lua: CREATE_ACCOUNT, numberOfKeys: 1 },
  fpgUpdateAccount: { lua: UPDATE_ACCOUNT, numberOfKeys: 1 },
  fpgPutPriceSet: { lua: PUT_PRICE_SET, numberOfKeys: 1 },
  fpgRefund: { lua: REFUND, numberOfKeys: 1 },
  fpgLease: { lua: LEASE, numberOfKeys: 1 },
  fpgReleaseLease: { lua: RELEASE_LEASE, numberOfKeys: 1 },
};

const PATCHABLE = ['status', 'plan', 'limit', 'anchor', 'label', 'key_hash'] as const;

/**
 * Delivered after the subscriber reconnects, since announcements sent while it was away are lost:
 * reload prices, and account id '*' means "forget every cached account".
 */
const resync = (): StoreEvent[] => [{ type: 'prices' }, { type: 'account', id: '*', keyHashes: [] }];

const storeEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('account'), id: z.string().min(1), keyHashes: z.array(z.string()) }),
  z.object({ type: z.literal('prices') }),
]);

// Bounded backoff that never gives up: the store must come back by itself after an outage.
const retryDelay = (times: number): number => Math.min(times * 100, 1000);

/**
 * The shared store on Redis (standalone, Sentinel or Cluster). Fails fast: no offline queue, a
 * command timeout and no retries, so every method rejects with STORE_UNAVAILABLE within about
 * `command_timeout_ms` while Redis is down or slow, and works again once it is back.
 *
 * Keys (prefix `fpg:` by default); all keys of one account share the hash tag `{acct:ID}`:
 *   fpg:{acct:ID}:account      hash of the StoredAccount fields (a null limit is an absent field)
 *   fpg:{acct:ID}:used:PERIOD  request counter of one period, expiring at period end + retention
 *   fpg:keyhash:HASH           account id of a key hash
 *   fpg:prices                 hash effective_date → JSON of the price set
 *   fpg:note:NAME              shared records: the upstream poller's lease (lease:upstream-poll) and status
 *   fpg:events                 pub/sub channel of StoreEvent JSON
 */
export class RedisStore implements Store {
  readonly kind = 'redis';
  private readonly redis: Redis | Cluster;
  private readonly channel: string;
  private readonly prices: string;
  private readonly log: Logger;
  private readonly listeners: Array<(event: StoreEvent) => void> = [];
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
    this.redis = connect(options);
    for (const [name, definition] of Object.entries(SCRIPTS)) this.redis.defineCommand(name, definition);
    this.watch(this.redis, 'commands');
    // Without an offline queue, a command sent before the first connection is ready would fail.
    this.holdCallsUntil(
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`not connected within ${options.connect_timeout_ms} ms`)), options.connect_timeout_ms).unref();
        this.redis.once('ready', () => {
          clearTimeout(timer);
          resolve();
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
      // Only a definite refusal removes the index entry: after a timeout the account may exist,
      // and an entry naming an account with another key hash finds nothing anyway.
      if ((await this.redis.fpgCreateAccount(this.accountKey(account.id), this.channel, message, ...encodeAccount(account))) === 0) {
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
      const reply = await this.redis.fpgUpdateAccount(this.accountKey(id), this.channel, id, JSON.stringify(encodePatch(patch)));
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

  consume(spec: ConsumeSpec): Promise<ConsumeResult> {
    const { accountId, revision, limit, expireAtMs } = spec;
    return this.run(() =>
      this.redis.fpgConsume(this.accountKey(accountId), this.counterKey(accountId, spec.periodId), revision, limit, expireAtMs).then(consumeResult),
    );
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
      const stored = await this.redis.fpgPutPriceSet(this.prices, set.effective_date, JSON.stringify(set), replace ? '1' : '0', this.channel, message);
      return stored === 1;
    });
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

  ping(): Promise<void> {
    return this.run(async () => {
      await this.redis.ping();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reopenTimer);
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
    const sub = this.subscriberConnection(node);
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
          if (this.subscribedBefore) resync().forEach((e) => this.deliver(e));
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

  private subscriberConnection(index: number): Redis {
    if (this.redis instanceof Redis) return this.redis.duplicate({ autoResubscribe: false });
    const nodes = this.options.cluster?.nodes ?? [];
    return new Redis({ ...nodes[index % nodes.length], ...nodeOptions(this.options), retryStrategy: null, autoResubscribe: false });
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

function connect(o: RedisStoreOptions): Redis | Cluster {
  if (o.cluster) {
    return new Cluster(o.cluster.nodes, {
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      clusterRetryStrategy: retryDelay,
      // When a node's connection closes, ioredis would resend the commands in flight on it after
      // retryDelayOnFailover ms, but the consume script may already have run there: a resend
      // could count a request twice. Fail them instead (the caller answers 503).
      retryDelayOnFailover: 0,
      // MOVED, ASK, TRYAGAIN and CLUSTERDOWN are answered before anything runs, so those are safe
      // to follow; keep the retries within command_timeout_ms.
      maxRedirections: Math.max(2, Math.floor(o.command_timeout_ms / 100) - 1),
      redisOptions: nodeOptions(o),
    });
  }
  return new Redis(o.url, {
    ...nodeOptions(o),
    enableOfflineQueue: false,
    enableAutoPipelining: true,
    retryStrategy: retryDelay,
    // A demoted primary answers READONLY on a live connection: reconnecting finds the new one
    // (through Sentinel, or a managed service's DNS name).
    reconnectOnError: (err) => err.message.startsWith('READONLY'),
    ...(o.sentinel && {
      sentinels: o.sentinel.nodes,
      name: o.sentinel.name,
      sentinelPassword: o.sentinel.password,
      enableTLSForSentinelMode: o.url.startsWith('rediss://'),
    }),
  });
}

/**
 * Options of every connection to a data node. No retries per request: a command in flight when
 * the connection drops may have run, and sending it again could count a request twice.
 */
function nodeOptions(o: RedisStoreOptions): RedisOptions {
  const base: RedisOptions = {
    connectionName: 'fuel-gateway',
    commandTimeout: o.command_timeout_ms,
    connectTimeout: o.connect_timeout_ms,
    maxRetriesPerRequest: 0,
    ...(o.url.startsWith('rediss://') && { tls: o.tls_ca_file ? { ca: readFileSync(o.tls_ca_file) } : {} }),
  };
  if (!o.cluster) return base;
  // A cluster takes its nodes from config, so the URL supplies only credentials and TLS.
  const url = new URL(o.url);
  return {
    ...base,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
  };
}

function quit(connection: Redis | Cluster): Promise<void> {
  return connection.quit().then(
    () => undefined,
    () => connection.disconnect(),
  );
}

function unavailable(err: unknown): never {
  if (err instanceof GatewayError) throw err;
  throw new GatewayError('STORE_UNAVAILABLE', `Redis store unavailable: ${err instanceof Error ? err.message : String(err)}`);
}

function consumeResult([code, used]: [string, number]): ConsumeResult {
  switch (code) {
    case 'ok':
    case 'exhausted':
      return { kind: code, used };
    case 'inactive':
    case 'changed':
      return { kind: code };
  }
  throw new Error(`unexpected reply from the consume script: ${code}`);
}

function encodeAccount(a: StoredAccount): string[] {
  const fields = ['id', a.id, 'status', a.status, 'plan', a.plan, 'anchor', a.anchor, 'label', a.label];
  fields.push('created_at', a.created_at, 'revision', String(a.revision), 'key_hash', a.key_hash);
  if (a.limit !== null) fields.push('limit', String(a.limit));
  return fields;
}

function encodePatch(patch: AccountPatch): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const field of PATCHABLE) {
    const value = patch[field];
    if (value !== undefined) out[field] = value === null ? null : String(value);
  }
  return out;
}

function decodeAccount(h: Record<string, string>): StoredAccount | null {
  if (h.id === undefined || h.revision === undefined) return null;
  return {
    id: h.id,
    // Anything but a clean 'active' refuses requests: fail closed on a damaged record.
    status: h.status === 'active' ? 'active' : 'inactive',
    plan: h.plan ?? '',
    limit: h.limit === undefined ? null : Number(h.limit),
    anchor: h.anchor ?? '',
    label: h.label ?? '',
    created_at: h.created_at ?? '',
    revision: Number(h.revision),
    key_hash: h.key_hash ?? '',
  };
}

const pairsToRecord = (flat: string[]): Record<string, string> =>
  Object.fromEntries(flat.flatMap((v, i) => (i % 2 === 0 ? [[v, flat[i + 1] ?? '']] : [])));

function parseEvent(text: string): StoreEvent | null {
  try {
    const parsed = storeEvent.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
