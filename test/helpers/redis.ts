import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestContext } from './context.js';
import { tempDir } from './tmp.js';
import { scaled, waitFor } from './wait.js';

/**
 * The store's timeouts stretched for a busy machine: CLIs run in-process start side by side in
 * one event loop, and a connection the default 1 s allows can take longer there (a CLI beside the
 * bench: "not connected within 1000 ms").
 */
export const storeTimeouts = (): { command_timeout_ms: number; connect_timeout_ms: number } => ({
  command_timeout_ms: scaled(500),
  connect_timeout_ms: scaled(2000),
});

export interface RedisServer {
  port: number;
  url: string;
  /** The store setting for a gateway or CLI on this server, with `storeTimeouts`. */
  store: { type: 'redis'; redis: { url: string; command_timeout_ms: number; connect_timeout_ms: number } };
  /** Kills the server (SIGKILL, like a crash) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: nothing is persisted). */
  start(): Promise<void>;
  /** Freezes the process (SIGSTOP): connections stay open and nothing is answered. */
  pause(): void;
  /** Lets a paused server run again (SIGCONT). */
  resume(): void;
  /** Runs redis-cli against this server and returns its output. */
  cli(...args: string[]): Promise<string>;
}

export interface RedisCluster {
  nodes: Array<{ host: string; port: number }>;
  servers: RedisServer[];
}

const run = promisify(execFile);

function requireRedis(): void {
  try {
    execFileSync('redis-server', ['--version']);
    execFileSync('redis-cli', ['--version']);
  } catch {
    throw new Error(
      'redis-server and redis-cli must be on PATH for the Redis store tests (e.g. apt-get install redis-server)',
    );
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

const cli = async (port: number, args: string[]): Promise<string> =>
  (await run('redis-cli', ['-p', String(port), ...args])).stdout;

/** Polls `cond` (a failure counts as false) until it holds; `gaveUp` ends the wait early. */
const until = (what: string, cond: () => Promise<boolean>, gaveUp = (): boolean => false): Promise<number> =>
  waitFor(what, cond, 10_000, { gaveUp, every: 25 });

const serverArgs = (port: number): string[] => [
  '--port',
  String(port),
  '--bind',
  '127.0.0.1',
  '--save',
  '',
  '--appendonly',
  'no',
];

/** Spawns a private redis-server on a free loopback port; killed on teardown. */
export function startRedis(t: TestContext, extraArgs: string[] = []): Promise<RedisServer> {
  return spawnServer(t, (port) => [...serverArgs(port), ...extraArgs]);
}

/** A Sentinel watching `master` under `name` (quorum 1). */
export async function startSentinel(t: TestContext, master: RedisServer, name: string): Promise<RedisServer> {
  const dir = tempDir('fpg-sentinel-');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const conf = join(dir, 'sentinel.conf');
  // Sentinel rewrites its config file, so it must be a real, writable file.
  await writeFile(conf, `sentinel monitor ${name} 127.0.0.1 ${master.port} 1\n`);
  return spawnServer(t, (port) => [conf, '--sentinel', '--port', String(port), '--bind', '127.0.0.1']);
}

async function spawnServer(t: TestContext, argsFor: (port: number) => string[]): Promise<RedisServer> {
  requireRedis();
  // A free port may be taken by another process before the server binds it (a busy machine runs
  // a bench and other test files): then another port, a few times.
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnOn(t, argsFor, await freePort());
    } catch (err) {
      if (attempt === 5 || !/Address already in use/.test(String(err))) throw err;
    }
  }
}

async function spawnOn(t: TestContext, argsFor: (port: number) => string[], port: number): Promise<RedisServer> {
  let child: ChildProcess | null = null;
  let output = '';
  const killOnExit = (): void => void child?.kill('SIGKILL');
  process.once('exit', killOnExit);

  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    store: { type: 'redis', redis: { url: `redis://127.0.0.1:${port}`, ...storeTimeouts() } },
    async start() {
      const proc = spawn('redis-server', argsFor(port), { stdio: ['ignore', 'pipe', 'pipe'] });
      child = proc;
      proc.stdout.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-2000)));
      proc.stderr.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-2000)));
      let exited = false;
      proc.once('exit', () => (exited = true));
      try {
        await until(
          `redis-server on port ${port}`,
          async () => (await cli(port, ['ping'])).trim() === 'PONG',
          () => exited,
        );
      } catch {
        proc.kill('SIGKILL');
        throw new Error(`redis-server on port ${port} did not start:\n${output}`);
      }
    },
    async stop() {
      const proc = child;
      child = null;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGKILL');
      await exited;
    },
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    cli: (...args) => cli(port, args),
  };
  t.teardown(async () => {
    await server.stop();
    process.off('exit', killOnExit);
  });
  await server.start();
  return server;
}

/** Three cluster primaries on loopback (no replicas), ready when every node reports cluster_state:ok. */
export async function startCluster(t: TestContext): Promise<RedisCluster> {
  const dir = tempDir('fpg-cluster-');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const servers: RedisServer[] = [];
  for (let i = 0; i < 3; i++) {
    // Teardowns run in reverse, so the servers stop before their directory is removed.
    const args = (port: number): string[] => [
      ...serverArgs(port),
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      join(dir, `nodes-${port}.conf`),
      '--dir',
      dir,
    ];
    servers.push(await spawnServer(t, args));
  }
  const addresses = servers.map((s) => `127.0.0.1:${s.port}`);
  await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
  for (const s of servers)
    await until(`cluster_state:ok on ${s.port}`, async () =>
      (await s.cli('cluster', 'info')).includes('cluster_state:ok'),
    );
  return { nodes: servers.map((s) => ({ host: '127.0.0.1', port: s.port })), servers };
}
