import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../config/load.js';
import { GATEWAY_ARGS, ownChild } from './children.js';
import { fillServers, haproxyBinary, serverName, serverStats, setServerState } from './haproxy.js';
import { StateDir } from './state-dir.js';
import { Supervised, type SupervisedOptions, waitFor } from './supervised.js';

export interface TopologyOptions {
  gateways: number;
  /** The balancer's public port; 0 picks a free one. */
  port: number;
  /**
   * The first gateway's port; the next gateways take the next free ports, their admin listeners
   * the free ports from 100 above, Redis the first free one from 200 above. Ports below the
   * kernel's ephemeral range (32768 and up) are never taken meanwhile by an outgoing connection.
   */
  basePort: number;
  host: string;
  stateDir: string;
  /** A PEM (certificate and key): the balancer also serves TLS on `tlsPort`. */
  tlsCert?: string | undefined;
  tlsPort?: number | undefined;
  /** The gateways' settings file, in place of deploy/gateway.yaml. */
  gatewayConfig?: string | undefined;
  /** One JSON object per line on stdout. */
  emit: (event: Record<string, unknown>) => void;
}

interface Gateway {
  process: Supervised;
  port: number;
  adminPort: number;
}

const GATEWAY_CONFIG = join(PROJECT_ROOT, 'deploy/gateway.yaml');
const BALANCER_CONFIG = join(PROJECT_ROOT, 'deploy/haproxy.cfg');
const READY_MS = 30_000;

/** The port if nothing listens on it (0: one the kernel picks), else null. */
function tryPort(port: number, host: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    // In use: try another. Anything else (an address this machine does not have) is the caller's error.
    server.once('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(null) : reject(new Error(`${host}: ${err.message}`)),
    );
    server.listen(port, host, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : null));
    });
  });
}

const taken = new Set<number>();

/** The first free port from `from` up (0: any free port), never one handed out before. */
export async function freePort(from: number, host = '127.0.0.1'): Promise<number> {
  for (let port = from; port < 65536; port += from === 0 ? 0 : 1) {
    if (taken.has(port)) continue;
    const got = await tryPort(port, host);
    if (got !== null && !taken.has(got)) {
      taken.add(got);
      return got;
    }
  }
  throw new Error(`no free port from ${from}`);
}

const isReady = async (port: number): Promise<boolean> =>
  (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) })).status === 200;

/**
 * The production topology on one machine, as real processes on loopback: Redis (append-only
 * file), N gateways running deploy/gateway.yaml unchanged, and HAProxy running deploy/haproxy.cfg
 * with the gateways' addresses filled in. Every process is restarted when it dies.
 */
export class Topology {
  private redis!: Supervised;
  private balancer!: Supervised;
  private readonly gateways: Gateway[] = [];
  private readonly adminToken = process.env['ADMIN_TOKEN'] || randomBytes(16).toString('hex');
  // The gateways' Redis password: not the admin token, which clients of the admin API hold.
  private readonly redisPassword = randomBytes(16).toString('hex');
  private readonly state: StateDir;
  private readonly logDir: string;
  private readonly socket: string;
  private redisPort = 0;
  private publicPort = 0;
  private tlsPort = 0;
  private rolling: Promise<void> = Promise.resolve();

  constructor(private readonly o: TopologyOptions) {
    this.logDir = join(o.stateDir, 'logs');
    this.socket = join(o.stateDir, 'haproxy.sock');
    this.state = new StateDir(o.stateDir, ownChild(o.stateDir));
  }

  private readonly spawned = (name: string, pid: number): void => this.state.started(name, pid);

  /** A fixed port that something already listens on (a second runner's balancer) stops the start. */
  private async mustBeFree(port: number, what: string): Promise<void> {
    if ((await tryPort(port, this.o.host)) === null)
      throw new Error(`${this.o.host}:${port} (${what}) is in use: stop what listens there or choose another port`);
  }

  private readonly report = (event: 'exited' | 'restarted', detail: Record<string, unknown>): void => {
    const gw = this.gateways.find((g) => g.process.name === detail['name']);
    this.o.emit({ event, ...detail, ...(gw ? { port: gw.port, admin: `http://127.0.0.1:${gw.adminPort}` } : {}) });
  };

  async start(): Promise<Record<string, unknown>> {
    const haproxy = haproxyBinary();
    const left = await this.state.take();
    if (left.length > 0) this.o.emit({ event: 'stopped-leftovers', processes: left });
    mkdirSync(this.logDir, { recursive: true, mode: 0o700 });
    mkdirSync(join(this.o.stateDir, 'redis'), { recursive: true, mode: 0o700 });
    if (this.o.port !== 0) await this.mustBeFree(this.o.port, '--port');
    if (this.o.tlsCert !== undefined && this.o.tlsPort !== 0)
      await this.mustBeFree(this.o.tlsPort ?? 8443, '--tls-port');
    this.redisPort = await freePort(this.o.basePort + 200);
    this.publicPort = this.o.port === 0 ? await freePort(0, this.o.host) : this.o.port;
    this.tlsPort = this.o.tlsPort === 0 ? await freePort(0, this.o.host) : (this.o.tlsPort ?? 8443);
    this.startRedis();
    await waitFor('redis', () => this.redisPing(), READY_MS);

    for (let i = 0; i < this.o.gateways; i++) this.gateways.push(await this.gateway(i));
    for (const g of this.gateways) g.process.start();
    await Promise.all(
      this.gateways.map((g) =>
        waitFor(`${g.process.name} /readyz (see ${g.process.logFile})`, () => isReady(g.port), READY_MS),
      ),
    );

    const cfg = join(this.o.stateDir, 'haproxy.cfg');
    writeFileSync(
      cfg,
      fillServers(
        readFileSync(BALANCER_CONFIG, 'utf8'),
        this.gateways.map((g) => g.port),
      ),
    );
    const tls =
      this.o.tlsCert === undefined
        ? {}
        : { FPG_TLS_CERT: this.o.tlsCert, FPG_LB_TLS_BIND: `${this.o.host}:${this.tlsPort}` };
    this.balancer = this.supervised('balancer', 'haproxy', {
      cmd: haproxy,
      args: ['-f', cfg, '-db'],
      env: { ...process.env, FPG_LB_BIND: `${this.o.host}:${this.publicPort}`, FPG_LB_SOCKET: this.socket, ...tls },
    });
    this.balancer.start();
    await waitFor('the balancer to see every gateway up', () => this.allUp(), READY_MS);

    const host = this.o.host.includes(':') ? `[${this.o.host}]` : this.o.host;
    return {
      pid: process.pid,
      public: `http://${host}:${this.publicPort}`,
      ...(this.o.tlsCert === undefined ? {} : { public_tls: `https://${host}:${this.tlsPort}` }),
      redis: `redis://127.0.0.1:${this.redisPort}`,
      admin_token: this.adminToken,
      lb: { pid: this.balancer.pid, logs: [this.balancer.logFile] },
      gateways: this.gateways.map((g) => ({
        pid: g.process.pid,
        port: g.port,
        admin: `http://127.0.0.1:${g.adminPort}`,
        logs: [g.process.logFile],
      })),
    };
  }

  private startRedis(): void {
    const dir = join(this.o.stateDir, 'redis');
    // Each gateway logs in as a user of its own: CLIENT LIST tells them apart, and one gateway's
    // access can be cut (ACL SETUSER gateway-2 off) without touching the others.
    const users = ['user default on nopass ~* &* +@all'];
    for (let i = 0; i < this.o.gateways; i++) users.push(`user gateway-${i + 1} on >${this.redisPassword} ~* &* +@all`);
    writeFileSync(join(dir, 'users.acl'), `${users.join('\n')}\n`, { mode: 0o600 });
    this.redis = this.supervised('redis', 'redis', {
      cmd: 'redis-server',
      args: [
        ...['--port', String(this.redisPort), '--bind', '127.0.0.1', '--dir', dir],
        ...['--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '', '--aclfile', join(dir, 'users.acl')],
      ],
    });
    this.redis.start();
  }

  /** A process of the topology: its output in `logName`.log of the log folder, its exits and starts reported. */
  private supervised(name: string, logName: string, command: SupervisedOptions['command']): Supervised {
    const logFile = join(this.logDir, `${logName}.log`);
    return new Supervised({ name, command, logFile, report: this.report, spawned: this.spawned });
  }

  private async redisPing(): Promise<boolean> {
    const { Redis } = await import('ioredis');
    const r = new Redis({ port: this.redisPort, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await r.connect();
      return (await r.ping()) === 'PONG';
    } finally {
      r.disconnect();
    }
  }

  private async gateway(i: number): Promise<Gateway> {
    const port = await freePort(this.o.basePort + i);
    const adminPort = await freePort(this.o.basePort + 100 + i);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      FUEL_GATEWAY_CONFIG: this.o.gatewayConfig ?? GATEWAY_CONFIG,
      HOST: '127.0.0.1',
      PORT: String(port),
      ADMIN_HOST: '127.0.0.1',
      ADMIN_PORT: String(adminPort),
      ADMIN_TOKEN: this.adminToken,
      REDIS_URL: `redis://gateway-${i + 1}:${this.redisPassword}@127.0.0.1:${this.redisPort}`,
      TRUSTED_PROXIES: '127.0.0.1',
    };
    const cmd = {
      cmd: process.execPath,
      args: GATEWAY_ARGS,
      env,
    };
    const name = `gateway-${i + 1}`;
    return { process: this.supervised(name, name, cmd), port, adminPort };
  }

  private async allUp(): Promise<boolean> {
    const stats = await serverStats(this.socket);
    return this.gateways.every((_, i) => stats.get(serverName(i))?.status.startsWith('UP'));
  }

  /**
   * Restarts the gateways one at a time, none serving while it is down: the balancer stops
   * sending it requests (maint), its last requests finish, it drains and exits (SIGTERM), it
   * starts again, and only once its /readyz and the balancer's check pass does the next one go.
   */
  rollingRestart(): Promise<void> {
    this.rolling = this.rolling.then(async () => {
      for (const [i, g] of this.gateways.entries()) {
        await setServerState(this.socket, i, 'maint');
        try {
          await this.roll(i, g);
        } finally {
          // Even when the new process is not ready in time, the balancer's checks decide again: a
          // gateway left in maintenance would never get traffic back. The roll stops there.
          await setServerState(this.socket, i, 'ready');
        }
        await waitFor(
          `the balancer to take ${g.process.name} back`,
          async () => (await serverStats(this.socket)).get(serverName(i))?.status.startsWith('UP') === true,
          READY_MS,
        );
        this.o.emit({
          event: 'restarted',
          name: g.process.name,
          pid: g.process.pid,
          port: g.port,
          admin: `http://127.0.0.1:${g.adminPort}`,
          reason: 'rolling restart',
        });
      }
      this.o.emit({ event: 'rolled', gateways: this.gateways.length });
    });
    return this.rolling;
  }

  /** One gateway, out of rotation: its last requests finish, it drains and exits, it starts again. */
  private async roll(i: number, g: Gateway): Promise<void> {
    await waitFor(
      `${g.process.name} to finish its requests`,
      async () => (await serverStats(this.socket)).get(serverName(i))?.current === 0,
      20_000,
    );
    await g.process.stop('SIGTERM');
    g.process.start();
    await waitFor(`${g.process.name} /readyz (see ${g.process.logFile})`, () => isReady(g.port), READY_MS);
  }

  /** Balancer first (no new requests), then the gateways drain, then Redis writes its file. */
  async stop(): Promise<void> {
    // None is restarted from here on, whatever exits first.
    for (const p of [this.balancer, this.redis, ...this.gateways.map((g) => g.process)]) p?.release();
    await this.balancer?.stop('SIGUSR1');
    await Promise.all(this.gateways.map((g) => g.process.stop('SIGTERM')));
    await this.redis?.stop('SIGTERM');
    this.state.release();
  }
}
