// npm run bench -- --topology: the deployed topology against the same balancer in front of the
// bare server, in one run. wrk → HAProxy (deploy/haproxy.cfg) → 2 gateways on Redis (the runner
// of `npm run topology`), and wrk → HAProxy (the same file) → bare node:http writing the
// gateway's bytes. Also counts the balancer's connections to the servers behind it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { child, freePort, median, sleep, startBare, until, wrk } from './lib.mjs';

const SIMPLE = '/fuel-api/api/simple-current.php?api_key=';
const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '–');

/** Starts `npm run topology`'s program; resolves with its ready line. */
function startRunner(dir, gateways) {
  return new Promise((resolve, reject) => {
    const base = String(14_000 + 300 * Math.floor(Math.random() * 40));
    const proc = child(
      process.execPath,
      [
        ...['dist/topology/topology-cli.js', '--gateways', String(gateways), '--port', '0'],
        ...['--gateway-port', base, '--state-dir', join(dir, 'topology')],
      ],
      { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ADMIN_TOKEN: '', REDIS_URL: '' } },
    );
    let out = '';
    proc.stdout.on('data', (c) => {
      out += c;
      const nl = out.indexOf('\n');
      if (nl !== -1) resolve(JSON.parse(out.slice(0, nl)));
    });
    proc.once('exit', (code) => reject(new Error(`topology exited ${code}`)));
  });
}

/** Accounts created through the admin API, as an operator would; returns the keys file. */
async function seed(ready, count, dir) {
  const keys = [];
  const post = async () => {
    const r = await fetch(`${ready.gateways[0].admin}/admin/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ready.admin_token}` },
      body: JSON.stringify({ plan: 'enterprise', limit: 1_000_000_000, label: 'bench' }),
    });
    keys.push((await r.json()).api_key);
  };
  for (let done = 0; done < count; done += 50)
    await Promise.all(Array.from({ length: Math.min(50, count - done) }, post));
  const file = join(dir, 'topology.keys');
  writeFileSync(file, `${keys.join('\n')}\n`);
  return { file, first: keys[0] };
}

/** The shipped balancer config in front of the bare server, filled in as the runner fills it. */
async function startBareBehindBalancer(dir, answerUrl) {
  const { fillServers, haproxyBinary } = await import('../dist/topology/haproxy.js');
  const { readFileSync } = await import('node:fs');
  const bare = await startBare(answerUrl, join(dir, 'answer.json'));
  const barePort = Number(new URL(bare.base).port);
  const cfg = join(dir, 'bare-haproxy.cfg');
  writeFileSync(cfg, fillServers(readFileSync('deploy/haproxy.cfg', 'utf8'), [barePort]));
  const port = await freePort();
  const lb = child(haproxyBinary(), ['-f', cfg, '-db'], {
    env: { ...process.env, FPG_LB_BIND: `127.0.0.1:${port}`, FPG_LB_SOCKET: join(dir, 'bare-haproxy.sock') },
  });
  const base = `http://127.0.0.1:${port}`;
  await until('balancer → bare', async () => (await fetch(`${base}/readyz`)).ok);
  const version = execFileSync(haproxyBinary(), ['-v']).toString().split(' ')[2];
  return {
    base,
    pids: [bare.pid],
    lbPid: lb.pid,
    serverPorts: [barePort],
    version,
    socket: join(dir, 'bare-haproxy.sock'),
  };
}

/** Established connections to the given server ports (the balancer's side of them). */
function connectionsTo(ports) {
  const filter = ports.map((p) => `dport = :${p}`).join(' or ');
  return execFileSync('ss', ['-Htn', 'state', 'established', `( ${filter} )`])
    .toString()
    .split('\n')
    .filter((l) => l.trim() !== '').length;
}

export async function topologyBench({ seconds, rounds, connections, threads, accounts, header }) {
  const dir = mkdtempSync(join(tmpdir(), 'fpg-bench-topology-'));
  const ready = await startRunner(dir, 2);
  const keys = await seed(ready, Math.min(accounts, 2000), dir);
  const behind = await startBareBehindBalancer(dir, `${ready.public}${SIMPLE}${keys.first}`);
  const targets = [
    {
      label: 'balancer → bare node:http',
      base: behind.base,
      pids: behind.pids,
      lb: behind.lbPid,
      ports: behind.serverPorts,
      socket: behind.socket,
      runs: [],
    },
    {
      label: 'balancer → 2 gateways, Redis',
      base: ready.public,
      pids: ready.gateways.map((g) => g.pid),
      lb: ready.lb.pid,
      ports: ready.gateways.map((g) => g.port),
      socket: join(dir, 'topology', 'haproxy.sock'),
      runs: [],
    },
  ];
  for (const t of targets)
    await wrk({ url: t.base, prefix: SIMPLE, keysFile: keys.file, seconds: 3, threads, connections });
  for (let r = 1; r <= rounds; r++) {
    for (const t of targets) {
      const { serverStats } = await import('../dist/topology/haproxy.js');
      const opened = async () => [...(await serverStats(t.socket)).values()].reduce((n, s) => n + s.connects, 0);
      const openedBefore = await opened();
      let peak = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, connectionsTo(t.ports))), 500);
      const res = await wrk({
        url: t.base,
        prefix: SIMPLE,
        keysFile: keys.file,
        seconds,
        threads,
        connections,
        cpuOf: { servers: t.pids, lb: [t.lb] },
      });
      clearInterval(sampler);
      res.backendConnections = peak;
      res.opened = (await opened()) - openedBefore;
      t.runs.push(res);
      console.log(
        `round ${r} ${t.label.padEnd(30)} ${fmt(res.rps).padStart(7)} req/s  p99 ${fmt(res.p99, 2)} ms  errors ${res.errors}  balancer→server connections ${peak}`,
      );
      await sleep(200);
    }
  }
  const ref = targets[0];
  const lines = [
    '| target | req/s | × bare behind the balancer | p50 ms | p99 ms | p99 × | errors | server CPU µs/req | balancer CPU µs/req | balancer→server connections (peak) | connections opened per 1,000 requests |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const t of targets) {
    const ratio = (f) => median(t.runs.map((run, i) => f(run) / f(ref.runs[i])));
    const total = t.runs.reduce((s, r) => s + r.requests, 0);
    const perReq = (k) => (t.runs.reduce((s, r) => s + r.cpu[k], 0) / total) * 1e6;
    lines.push(
      `| ${t.label} | ${fmt(median(t.runs.map((r) => r.rps)))} | ${
        t === ref
          ? '1'
          : fmt(
              ratio((r) => r.rps),
              2,
            )
      } | ` +
        `${fmt(median(t.runs.map((r) => r.p50)), 2)} | ${fmt(median(t.runs.map((r) => r.p99)), 2)} | ` +
        `${
          t === ref
            ? '1'
            : fmt(
                ratio((r) => r.p99),
                2,
              )
        } | ${t.runs.reduce((s, r) => s + r.errors, 0)} | ` +
        `${fmt(perReq('servers'), 1)} | ${fmt(perReq('lb'), 1)} | ${Math.max(...t.runs.map((r) => r.backendConnections))} | ${fmt((t.runs.reduce((s, r) => s + r.opened, 0) / total) * 1000, 2)} |`,
    );
  }
  const out = lines.join('\n');
  console.log(`\n${out}`);
  const setup = `wrk -t${threads} -c${connections}, ${seconds} s per run, ${rounds} alternating rounds, ${Math.min(accounts, 2000)} accounts rotated by bench/rotate.lua; HAProxy ${behind.version}`;
  return `${header('topology')}\n${setup}; gateways as deployed (deploy/gateway.yaml: access log on); medians; × is the median of per-round ratios to the bare server behind the same balancer config. Connections: the most established balancer→server connections seen during a run (sampled every 0.5 s with ss), and the connections the balancer opened (its runtime API's \`connect\` counter, health checks aside) per 1,000 requests.\n\n${out}\n`;
}
