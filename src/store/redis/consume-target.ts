import type { Socket } from 'node:net';
import type { Redis } from 'ioredis';
import type { RedisStoreOptions } from './connection.js';
import type { LeanOptions } from './lean-consume.js';
import { tlsOptions } from './tls-ca.js';

/**
 * Where the consume connection (lean-consume.ts) goes, and how it logs in: the command
 * connection's server. Standalone: the URL's. Sentinel: the primary the command connection is
 * connected to now (ioredis asked the sentinels), read again on each connect. A Cluster has none:
 * its consumes go one per request through ioredis, each to its slot's node.
 */
export function consumeTarget(
  o: RedisStoreOptions,
  commands: Redis,
): Pick<LeanOptions, 'address' | 'tls' | 'username' | 'password' | 'db'> {
  const url = new URL(o.url);
  const fixed = { host: url.hostname.replace(/^\[(.*)\]$/, '$1') || 'localhost', port: Number(url.port || 6379) };
  const current = (): { host: string; port: number } | null => {
    // ioredis has no stream before its first connect.
    const stream = commands.status === 'ready' ? (commands.stream as Socket | undefined) : undefined;
    if (stream?.remoteAddress === undefined || stream.remotePort === undefined) return null;
    return { host: stream.remoteAddress, port: stream.remotePort };
  };
  return {
    address: o.sentinel ? current : () => fixed,
    tls: tlsOptions(o).tls,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: Number(url.pathname.slice(1)) || 0,
  };
}
