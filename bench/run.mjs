// Metered throughput of one gateway process, as ratios against /healthz (same process, same run).
// Usage: npm run bench [-- --seconds 5 --connections 50]   (not part of npm test)
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const root = fileURLToPath(new URL('..', import.meta.url));
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};
const seconds = arg('seconds', 5);
const connections = arg('connections', 50);

function startGateway(env) {
  const child = spawn(process.execPath, ['dist/main.js', 'serve', '--config', 'bench/bench.yaml'], {
    cwd: root,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: '0', FUEL_GATEWAY_CONFIG: '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const read = (c) => {
      out += c;
      const m = out.match(/curl '(http:\/\/[^']+)'/);
      if (!m) return;
      // From here on the access log is drained unread, as a log shipper would.
      child.stdout.off('data', read);
      child.stdout.resume();
      resolve({ child, url: new URL(m[1]) });
    };
    child.stdout.on('data', read);
    child.on('exit', (code) => reject(new Error(`gateway exited ${code}:\n${out}`)));
  });
}

const run = (url) =>
  new Promise((resolve, reject) =>
    autocannon({ url, connections, duration: seconds, pipelining: 1 }, (err, r) => (err ? reject(err) : resolve(r))),
  );

async function scenario(label, env) {
  const { child, url } = await startGateway(env);
  const base = `${url.protocol}//${url.host}`;
  const key = url.searchParams.get('api_key');
  await run(`${base}/healthz`); // warm-up
  const ref = await run(`${base}/healthz`);
  const simple = await run(`${base}/fuel-api/api/simple-current.php?api_key=${key}`);
  const full = await run(`${base}/fuel-api/api/current.php?api_key=${key}`);
  child.kill('SIGTERM');
  const row = (name, r) =>
    `${label.padEnd(22)} ${name.padEnd(20)} ${String(Math.round(r.requests.average)).padStart(8)} req/s  p99 ${String(r.latency.p99).padStart(4)} ms  ` +
    `ratio ${(r.requests.average / ref.requests.average).toFixed(2)}  non-2xx ${r.non2xx}`;
  console.log(row('/healthz (reference)', ref));
  console.log(row('simple-current', simple));
  console.log(row('current', full));
}

console.log(`${connections} connections, ${seconds} s per run, node ${process.version}`);
await scenario('memory, LOG_LEVEL=info', { LOG_LEVEL: 'info' });
await scenario('memory, LOG_LEVEL=warn', { LOG_LEVEL: 'warn' });
