import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { CHILD_ARGS, endAtExit, ROOT } from './cli.js';
import type { TestContext } from './context.js';
import { tempDir } from './tmp.js';
import { sleep, waitFor } from './wait.js';

/** The runner's ready line (docs/deployment.md, "Without Docker: `npm run topology`"). */
export interface Ready {
  pid: number;
  public: string;
  public_tls?: string;
  redis: string;
  admin_token: string;
  lb: { pid: number; logs: string[] };
  gateways: Array<{ pid: number; port: number; admin: string; logs: string[] }>;
}

export interface Running {
  ready: Ready;
  stateDir: string;
  child: ChildProcess;
  /** Event lines printed after the ready line, in order. */
  events: Array<Record<string, unknown>>;
  /** Resolves with the first event (after the ready line) that `match` accepts. */
  waitEvent(match: (e: Record<string, unknown>) => boolean, ms: number): Promise<Record<string, unknown>>;
  admin<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** Creates an account through a gateway's admin API; its id and key. */
  account(plan: string, limit?: number): Promise<{ id: string; key: string }>;
  used(id: string): Promise<number>;
  /**
   * Requests to `route` gateway `index` has answered, from its own metrics: they move as each
   * answer is written, where its access log reaches its file up to a second later.
   */
  served(index: number, route?: string): Promise<number>;
  stop(): Promise<number | null>;
}

/**
 * Starts `npm run topology`'s program as a real child (dist/, built by tap's before program),
 * waits for its ready line, and stops it on teardown (SIGTERM; the runner ends its children).
 */
export async function startTopology(
  t: TestContext,
  args: string[] = [],
  ms = 60_000,
  stateDir = tempDir('fpg-topology-'),
): Promise<Running> {
  const child = spawn(
    process.execPath,
    [
      ...[...CHILD_ARGS, 'dist/topology/topology-cli.js', '--port', '0', '--state-dir', stateDir],
      // Away from the kernel's ephemeral ports, and apart from other tests' topologies.
      ...['--gateway-port', String(12_000 + 300 * Math.floor(Math.random() * 60)), ...args],
    ],
    { cwd: ROOT, env: { ...process.env, ADMIN_TOKEN: '', REDIS_URL: '', FUEL_GATEWAY_CONFIG: '' } },
  );
  // SIGTERM: the runner stops its own children (gateways, the balancer, Redis) before it exits.
  endAtExit(child, 'SIGTERM');
  let out = '';
  let err = '';
  const events: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  let ready: Ready | null = null;
  child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
    let nl = out.indexOf('\n');
    while (nl !== -1) {
      const line = JSON.parse(out.slice(0, nl)) as Record<string, unknown>;
      out = out.slice(nl + 1);
      if (ready === null) ready = line as unknown as Ready;
      else events.push(line);
      for (const w of waiters.splice(0)) w();
      nl = out.indexOf('\n');
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let stopped = false;
  const stop = async (): Promise<number | null> => {
    if (!stopped) {
      stopped = true;
      child.kill('SIGTERM');
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  t.teardown(stop);

  const changed = (): Promise<void> => new Promise((resolve) => waiters.push(resolve));
  const end = Date.now() + ms;
  while (ready === null) {
    if (child.exitCode !== null) throw new Error(`topology exited ${child.exitCode}: ${err}`);
    if (Date.now() > end) throw new Error(`topology not ready after ${ms} ms: ${err}`);
    await Promise.race([changed(), exited, sleep(200)]);
  }
  const r: Ready = ready;

  const admin = async <T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${r.gateways[0]?.admin}${path}`, {
      method,
      headers: { authorization: `Bearer ${r.admin_token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as T };
  };
  return {
    ready: r,
    stateDir,
    child,
    events,
    async waitEvent(match, waitMs) {
      const until = Date.now() + waitMs;
      for (;;) {
        const found = events.find(match);
        if (found) return found;
        if (Date.now() > until) throw new Error(`no such event within ${waitMs} ms: ${JSON.stringify(events)}`);
        await Promise.race([changed(), sleep(200)]);
      }
    },
    admin,
    async account(plan, limit) {
      const res = await admin<{ account: { id: string }; api_key: string }>('POST', '/admin/accounts', {
        plan,
        ...(limit === undefined ? {} : { limit }),
      });
      if (res.status !== 201) throw new Error(`account: ${res.status} ${JSON.stringify(res.body)}`);
      return { id: res.body.account.id, key: res.body.api_key };
    },
    async used(id) {
      return (await admin<{ usage: { requests_used: number } }>('GET', `/admin/accounts/${id}`)).body.usage
        .requests_used;
    },
    async served(index, route = 'simple-current') {
      const gw = r.gateways[index];
      if (gw === undefined) throw new Error(`no gateway ${index}`);
      const res = await fetch(`${gw.admin}/metrics`, { headers: { authorization: `Bearer ${r.admin_token}` } });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${gw.admin}/metrics: ${res.status} ${text}`);
      return text
        .split('\n')
        .filter((l) => l.startsWith('fuel_gateway_requests_total{') && l.includes(`route="${route}"`))
        .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    },
    stop,
  };
}

export interface Load {
  statuses: Map<number, number>;
  /** Requests that got no answer (reset, refused, timed out). */
  errors: number;
  sent: number;
  ok(): number;
  /** The first body of each status other than 200: what a failed assertion on statuses shows. */
  bodies: Map<number, string>;
}

/**
 * `connections` keep-alive clients, each sending one request after another to `url` (the key in
 * X-API-Key) until `until` resolves or `count` requests in all have been sent.
 */
export async function load(
  url: string,
  key: string,
  connections: number,
  opts: { count?: number; until?: Promise<unknown>; headers?: Record<string, string>; pauseMs?: number } = {},
): Promise<Load> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const result: Load = {
    statuses: new Map(),
    errors: 0,
    sent: 0,
    ok: () => result.statuses.get(200) ?? 0,
    bodies: new Map(),
  };
  let done = false;
  void opts.until?.then(() => (done = true));
  const one = (): Promise<void> =>
    new Promise((resolve) => {
      const req = request(url, { agent, headers: { 'x-api-key': key, ...opts.headers }, timeout: 20_000 }, (res) => {
        const status = res.statusCode ?? 0;
        let body = '';
        if (status === 200 || result.bodies.has(status)) res.resume();
        else res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => {
          if (body !== '') result.bodies.set(status, body);
          result.statuses.set(res.statusCode ?? 0, (result.statuses.get(res.statusCode ?? 0) ?? 0) + 1);
          resolve();
        });
        res.on('error', () => {
          result.errors++;
          resolve();
        });
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => {
        result.errors++;
        resolve();
      });
      req.end();
    });
  const client = async (): Promise<void> => {
    while (!done && (opts.count === undefined || result.sent < opts.count)) {
      result.sent++;
      await one();
      // Paced, so that the processes under test (a gateway starting again) get some of the CPU.
      if (opts.pauseMs) await sleep(opts.pauseMs);
    }
  };
  await Promise.all(Array.from({ length: connections }, client));
  agent.destroy();
  return result;
}

/** Request lines (not health checks) in a gateway's log file, optionally of one process. */
export function servedLines(file: string, pid?: number): number {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"url":"/fuel-api/') && (pid === undefined || l.includes(`"pid":${pid},`))).length;
}

export const SIMPLE = '/fuel-api/api/simple-current.php';
export { sleep };

/** The suite's polling helper (wait.ts), by the name the topology tests use. */
export const until = (what: string, cond: () => Promise<boolean> | boolean, ms: number): Promise<number> =>
  waitFor(what, cond, ms, { every: 50 });
