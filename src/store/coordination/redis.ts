import type { Redis, Result } from 'ioredis';
import type { RedisBackend } from '../redis/backend.js';
import { parseEvent } from '../redis/codec.js';
import { retryDelay, subscriberConnection } from '../redis/connection.js';
import {
  type AttemptChange,
  type AttemptGrant,
  type CoordinationStore,
  RESERVATION_MS,
  type StoreEvent,
  type ThrottleRule,
} from './interface.js';
import { INVALID_KEY, LEASE, RELEASE_LEASE } from './lua.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    fpgInvalidKey(
      attempts: string,
      windowMs: number,
      max: number,
      blockMs: number,
      channel: string,
      message: string,
      want: number,
      released: number,
      failed: number,
      unreserved: number,
      reservationMs: number,
    ): Result<[number, number, number], Context>;
    fpgLease(key: string, holder: string, ttlMs: number): Result<number, Context>;
    fpgReleaseLease(key: string, holder: string): Result<number, Context>;
  }
}

const SCRIPTS = {
  fpgInvalidKey: { lua: INVALID_KEY, numberOfKeys: 1 },
  fpgLease: { lua: LEASE, numberOfKeys: 1 },
  fpgReleaseLease: { lua: RELEASE_LEASE, numberOfKeys: 1 },
};

/**
 * Delivered after the subscriber reconnects, since announcements sent while it was away are lost:
 * reload prices, account id '*' means "forget every cached account", and a cache purge may have
 * been missed.
 */
const resync = (): StoreEvent[] => [
  { type: 'prices' },
  { type: 'account', id: '*', keyHashes: [] },
  { type: 'cache_purge', path: null },
];

/**
 * Coordination on Redis: leases and notes as plain keys, the invalid-key throttle as a counter
 * per address, and the announcements of every change over pub/sub on a connection of their own.
 */
export class RedisCoordination implements CoordinationStore {
  private readonly listeners: Array<(event: StoreEvent) => void> = [];
  private subscriber: Redis | null = null;
  private subscribedBefore = false;
  private firstSubscribed: (() => void) | undefined;
  private reopenTimer: NodeJS.Timeout | undefined;

  constructor(private readonly b: RedisBackend) {
    b.define(SCRIPTS);
  }

  subscribe(listener: (event: StoreEvent) => void): void {
    this.listeners.push(listener);
    if (this.subscriber || this.b.closed) return;
    // Changes this instance makes after subscribe() returns must reach the listener, so calls
    // wait for the subscription (at most connect_timeout_ms; a late one is followed by a resync).
    const subscribed = new Promise<void>((resolve) => (this.firstSubscribed = resolve));
    const patience = new Promise<void>((resolve) => setTimeout(resolve, this.b.options.connect_timeout_ms).unref());
    this.b.holdCallsUntil(Promise.all([this.b.currentGate(), Promise.race([subscribed, patience])]));
    this.listen(0, 0);
  }

  lease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const { b } = this;
    return b.run(async () => (await b.redis.fpgLease(b.noteKey(`lease:${name}`), holder, ttlMs)) === 1);
  }

  releaseLease(name: string, holder: string): Promise<void> {
    const { b } = this;
    return b.run(async () => {
      await b.redis.fpgReleaseLease(b.noteKey(`lease:${name}`), holder);
    });
  }

  putNote(name: string, value: string): Promise<void> {
    const { b } = this;
    return b.run(async () => {
      await b.redis.set(b.noteKey(name), value);
    });
  }

  getNote(name: string): Promise<string | null> {
    const { b } = this;
    return b.run(() => b.redis.get(b.noteKey(name)));
  }

  invalidKeyAttempts(address: string, rule: ThrottleRule, change: AttemptChange): Promise<AttemptGrant> {
    const { b } = this;
    const announcement = JSON.stringify({ type: 'blocked', address, ms: rule.blockMs });
    return b.run(async () => {
      const key = `${b.options.key_prefix}invalid:${address}`;
      const [granted, room, blockedMs] = await b.redis.fpgInvalidKey(
        key,
        rule.windowMs,
        rule.maxAttempts,
        rule.blockMs,
        b.channel,
        announcement,
        change.want,
        change.released,
        change.failed,
        change.unreserved,
        RESERVATION_MS,
      );
      return { granted, room: room === 1, blockedMs };
    });
  }

  purgeCache(path: string | null): Promise<void> {
    const { b } = this;
    const announcement = JSON.stringify({ type: 'cache_purge', path });
    return b.run(async () => {
      await b.redis.publish(b.channel, announcement);
    });
  }

  /** Stops listening (the store closes); returns the subscriber connection for the store to quit. */
  stop(): Redis | null {
    clearTimeout(this.reopenTimer);
    this.listeners.length = 0;
    return this.subscriber;
  }

  /**
   * Opens the dedicated subscriber connection. It subscribes on every `ready` (rather than
   * ioredis' automatic resubscription) so that a reconnect is known, and flushes caches then.
   * On a cluster it is a plain connection to one configured node (PUBLISH reaches every node);
   * when that node is lost it moves on to the next.
   */
  private listen(node: number, failures: number): void {
    const { b } = this;
    const sub = subscriberConnection(b.redis, b.options, node);
    this.subscriber = sub;
    b.watch(sub, 'subscriber');
    let wasReady = false;
    sub.on('message', (_channel: string, text: string) => {
      const event = parseEvent(text);
      if (event) this.deliver(event);
      else b.log.warn({ channel: b.channel }, 'ignored a malformed store announcement');
    });
    sub.on('ready', () => {
      wasReady = true;
      sub.subscribe(b.channel).then(
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
      if (b.closed) return;
      const next = wasReady ? 0 : failures + 1;
      this.reopenTimer = setTimeout(() => this.listen(node + 1, next), retryDelay(next));
    });
  }

  private deliver(event: StoreEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.b.log.error({ err, event }, 'store event listener failed');
      }
    }
  }
}
