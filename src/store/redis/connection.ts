import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Config } from '../../config/config-schema.js';
import { tlsOptions } from './tls-ca.js';

export type RedisStoreOptions = Config['store']['redis'];

// Bounded backoff that never gives up: the store must come back by itself after an outage.
export const retryDelay = (times: number): number => Math.min(times * 100, 1000);

/**
 * The command connection: standalone, Sentinel or Cluster. Fails fast: no offline queue, a
 * command timeout and no retries, so a command rejects within about `command_timeout_ms` while
 * Redis is down or slow.
 */
export function connect(o: RedisStoreOptions): Redis | Cluster {
  if (o.cluster) {
    return new Cluster(o.cluster.nodes, {
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      // This connection's own list (ioredis' default is one array shared by every Cluster):
      // RedisBackend.define adds the scripts that take their key count first.
      autoPipeliningIgnoredCommands: [],
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
 * Resolves once every cluster primary's own connection is up (at once for one server). A cluster
 * is 'ready' with only the node it asked for the slots connected; the others connect on their
 * first command, and without an offline queue ioredis refuses any other command sent to a node
 * while it connects ("Connection is closed"): the first requests after start would get 503.
 * A node's own connection queues a PING until it is up. A primary that is down only fails its
 * own PING: the others' slots are served as before.
 */
export async function mastersConnected(redis: Redis | Cluster): Promise<void> {
  if (redis instanceof Cluster) await Promise.allSettled(redis.nodes('master').map((node) => node.ping()));
}

/**
 * The dedicated pub/sub connection. It does not resubscribe by itself: the store subscribes on
 * every `ready`, so that it knows of a reconnect. On a cluster it is a plain connection to the
 * `index`-th configured node (PUBLISH reaches every node), which ends rather than retries.
 */
export function subscriberConnection(commands: Redis | Cluster, o: RedisStoreOptions, index: number): Redis {
  if (commands instanceof Redis) return commands.duplicate({ autoResubscribe: false });
  const nodes = o.cluster?.nodes ?? [];
  return new Redis({ ...nodes[index % nodes.length], ...nodeOptions(o), retryStrategy: null, autoResubscribe: false });
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
    ...tlsOptions(o),
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

export function quit(connection: Redis | Cluster): Promise<void> {
  return connection.quit().then(
    () => undefined,
    () => connection.disconnect(),
  );
}
