import { existsSync } from 'node:fs';
import { connect } from 'node:net';

const TEMPLATE_LINE = /^\s*server-template\s+gw\s.*$/m;

/**
 * The shipped balancer config with its one compose-only line (gateways found through Docker's
 * DNS) replaced by a `server` line per local gateway. Everything else is the file as shipped.
 */
export function fillServers(shipped: string, gatewayPorts: readonly number[]): string {
  if (!TEMPLATE_LINE.test(shipped)) throw new Error('deploy/haproxy.cfg: no `server-template gw ...` line to fill in');
  const servers = gatewayPorts.map((port, i) => `  server ${serverName(i)} 127.0.0.1:${port}`).join('\n');
  return shipped.replace(TEMPLATE_LINE, servers);
}

export const serverName = (index: number): string => `gw${index + 1}`;
export const BACKEND = 'gateways';

export function haproxyBinary(): string {
  for (const dir of (process.env['PATH'] ?? '').split(':').concat('/usr/sbin', '/usr/local/sbin')) {
    if (dir && existsSync(`${dir}/haproxy`)) return `${dir}/haproxy`;
  }
  throw new Error('haproxy is not installed (Debian: apt-get install haproxy)');
}

/** One command on HAProxy's runtime API (the `stats socket`), its whole answer. */
export function runtime(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const conn = connect(socket);
    let out = '';
    conn.setTimeout(5000, () => conn.destroy(new Error(`haproxy runtime API: no answer to ${command}`)));
    conn.on('connect', () => conn.end(`${command}\n`));
    conn.on('data', (c: Buffer) => (out += c.toString()));
    conn.on('error', reject);
    conn.on('close', () => resolve(out));
  });
}

export interface ServerStat {
  status: string;
  /** Sessions in progress on this server. */
  current: number;
  /** Sessions since start. */
  total: number;
  /** Connections opened to the server since start, and requests sent over a reused one. */
  connects: number;
  reuses: number;
}

/** `show stat` for the gateway servers, by server name. */
export async function serverStats(socket: string, backend = BACKEND): Promise<Map<string, ServerStat>> {
  const [header = '', ...rows] = (await runtime(socket, 'show stat')).trim().split('\n');
  const cols = header.replace(/^# /, '').split(',');
  const at = (name: string): number => cols.indexOf(name);
  const stats = new Map<string, ServerStat>();
  for (const row of rows) {
    const f = row.split(',');
    if (f[at('pxname')] !== backend || f[at('svname')] === 'BACKEND') continue;
    stats.set(f[at('svname')] ?? '', {
      status: f[at('status')] ?? '',
      current: Number(f[at('scur')]),
      total: Number(f[at('stot')]),
      connects: Number(f[at('connect')]),
      reuses: Number(f[at('reuse')]),
    });
  }
  return stats;
}

export async function setServerState(socket: string, index: number, state: 'ready' | 'drain' | 'maint'): Promise<void> {
  const answer = (await runtime(socket, `set server ${BACKEND}/${serverName(index)} state ${state}`)).trim();
  if (answer !== '') throw new Error(`haproxy: set server state ${state}: ${answer}`);
}
