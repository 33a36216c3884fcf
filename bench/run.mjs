// Metered throughput of one gateway process: memory store vs Redis, each as a ratio against
// /healthz served by the same process in the same run. Not part of npm test.
// Usage: npm run bench [-- --seconds 5 --connections 50]
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const root = fileURLToPath(new URL('..', import.meta.url));
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};
const seconds = arg('seconds', 5);
const connections = arg('connections', 50);
const children = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

async function until(fn) {
  for (let i = 0; i < 200; i++) {
    if (await fn().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error('gave up waiting');
}

function child(cmd, args, env = {}) {
  const c = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(c);
  return c;
}

async function startRedis() {
  const port = await freePort();
  child('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  await until(async () => {
    await new Promise((resolve, reject) => {
      const s = createServer();
      s.once('error', () => resolve());
      s.listen(port, '127.0.0.1', () => s.close(() => reject(new Error('not yet'))));
    });
    return true;
  });
  return `redis://127.0.0.1:${port}`;
}

async function startGateway(env) {
  const port = await freePort();
  const adminPort = await freePort();
  const gw = child(process.execPath, ['dist/main.js', 'serve'], {
    PORT: String(port), HOST: '127.0.0.1', ADMIN_PORT: String(adminPort), FUEL_GATEWAY_CONFIG: 'bench/bench.yaml', LOG_LEVEL: 'warn', ...env,
  });
  const base = `http://127.0.0.1:${port}`;
  await until(async () => (await fetch(`${base}/readyz`)).ok);
  const r = await fetch(`http://127.0.0.1:${adminPort}/admin/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ plan: 'enterprise', limit: 1_000_000_000, label: 'bench' }),
  });
  const { api_key } = await r.json();
  return { gw, base, key: api_key };
}

const load = (url) =>
  new Promise((resolve, reject) => autocannon({ url, connections, duration: seconds }, (err, r) => (err ? reject(err) : resolve(r))));

const row = (label, r, ref) =>
  console.log(
    `${label.padEnd(30)} ${String(Math.round(r.requests.average)).padStart(7)} req/s  p50 ${String(r.latency.p50).padStart(3)} ms  p99 ${String(r.latency.p99).padStart(3)} ms` +
      `  ×healthz ${(r.requests.average / ref.requests.average).toFixed(2)}  non-2xx ${r.non2xx}`,
  );

async function scenario(name, env) {
  const { gw, base, key } = await startGateway(env);
  await load(`${base}/healthz`); // warm-up: JIT, sockets
  const ref = await load(`${base}/healthz`);
  const simple = await load(`${base}/fuel-api/api/simple-current.php?api_key=${key}`);
  const full = await load(`${base}/fuel-api/api/current.php?api_key=${key}`);
  gw.kill('SIGTERM');
  row(`${name}: /healthz (reference)`, ref, ref);
  row(`${name}: simple-current`, simple, ref);
  row(`${name}: current`, full, ref);
  return simple.requests.average;
}

try {
  console.log(`${connections} connections, ${seconds} s per run, node ${process.version}, access log off`);
  const memory = await scenario('memory', {});
  const redis = await scenario('redis', { REDIS_URL: await startRedis() });
  console.log(`\nmetered simple-current, redis / memory: ${(redis / memory).toFixed(2)}`);
} finally {
  for (const c of children) c.kill('SIGKILL');
}
