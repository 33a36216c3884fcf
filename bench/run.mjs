// npm run bench: the gateway against a bare node:http server writing the same bytes, in one run,
// with wrk. Not part of npm test. Options and what is measured: docs/performance.md.
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import {
  child,
  cpuSeconds,
  family,
  freePort,
  median,
  PINNED,
  ROOT,
  rssMiB,
  sleep,
  startBare,
  stopAll,
  until,
  wrk,
} from './lib.mjs';
import { haproxyTargets, haproxyVersion, refusalTargets } from './rows.mjs';
import { topologyBench } from './topology.mjs';

const args = process.argv.slice(2);
const flag = (name) => args.includes(`--${name}`);
const option = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? dflt : args[i + 1];
};
const seconds = Number(option('seconds', 5));
const rounds = Number(option('rounds', 3));
const connections = Number(option('connections', 64));
const threads = Number(option('threads', 1));
const accounts = Number(option('accounts', 10_000));
// Seconds each target is loaded before the rounds. With many accounts, long enough for every key
// to be seen once (200,000 keys at ~20,000 req/s: 15 s), or the rounds measure first sights.
const warmUp = Number(option('warm-up', 3));
const only = option('only', '');
// Another checkout, built (`npm run build` there): each variant also runs from it, in the same rounds.
const before = option('before', '');
// Which groups of rows a comparison runs: the metered variants, the cache hit, the refusals, HAProxy.
const ROWS = ['metered', 'cache', 'refusals', 'haproxy'];
const rows = option('rows', ROWS.join(',')).split(',');
const wanted = (group) => rows.includes(group);
// Distinct made-up keys of the unknown-key scan: more than a round sends.
const scanKeys = Number(option('scan-keys', 300_000));

const ENDPOINTS = {
  simple: '/fuel-api/api/simple-current.php?api_key=',
  current: '/fuel-api/api/current.php?api_key=',
};
const dir = mkdtempSync(join(tmpdir(), 'fpg-bench-'));

async function startRedis() {
  const port = await freePort();
  const proc = child(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {},
    'load',
  );
  const url = `redis://127.0.0.1:${port}`;
  await until(
    'redis-server',
    async () =>
      execFileSync('redis-cli', ['-p', String(port), 'ping'])
        .toString()
        .trim() === 'PONG',
  );
  return { url, pid: proc.pid, port };
}

/**
 * Accounts written straight to Redis with the store's own records (keys/accounts.ts `newAccount`,
 * the Redis codec), pipelined by `seedAccounts`: 200,000 in seconds. Returns the keys file.
 */
async function seedRedis(url, count, name) {
  const { loadConfig } = await import('../dist/config/load.js');
  const { RedisStore } = await import('../dist/store/redis/redis-store.js');
  const { newAccount } = await import('../dist/keys/accounts.js');
  const pino = (await import('pino')).default;
  // A slice of 10,000 accounts is one wait on Redis: no request's fail-fast timeout applies.
  const redis = { url, command_timeout_ms: 600_000 };
  const config = loadConfig({ env: {}, overrides: { store: { type: 'redis', redis } } });
  const store = new RedisStore(config.store.redis, pino({ level: 'silent' }));
  // Connected before the first slice is made, which holds the event loop longer than the connect timeout.
  await store.ping();
  const started = Date.now();
  const file = join(dir, `${name}.keys`);
  const out = openSync(file, 'w');
  const data = { plan: 'enterprise', limit: 1_000_000_000, label: 'bench', status: 'active' };
  // In slices, so 1,000,000 accounts never sit in memory at once.
  for (let done = 0; done < count; done += 10_000) {
    const made = Array.from({ length: Math.min(10_000, count - done) }, () =>
      newAccount(config.plans, data, Date.now()),
    );
    await store.accounts.seedAccounts(made.map((m) => m.account));
    writeSync(out, `${made.map((m) => m.apiKey).join('\n')}\n`);
  }
  closeSync(out);
  await store.close();
  console.log(`seeded ${count} accounts in Redis in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return file;
}

/** Accounts created through a memory-store gateway's admin API (they live in that process). */
async function seedAdmin(admin, count, name) {
  const keys = [];
  const post = async () => {
    const r = await fetch(`${admin}/admin/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plan: 'enterprise', limit: 1_000_000_000, label: 'bench' }),
    });
    keys.push((await r.json()).api_key);
  };
  for (let done = 0; done < count; done += 50)
    await Promise.all(Array.from({ length: Math.min(50, count - done) }, post));
  const file = join(dir, `${name}.keys`);
  writeFileSync(file, `${keys.join('\n')}\n`);
  return file;
}

async function startGateway(v, redisUrl, nodeArgs = [], upstream = undefined, more = {}) {
  const port = await freePort();
  const adminPort = await freePort();
  const config = {
    listen: { public: { host: '127.0.0.1', port }, admin: { host: '127.0.0.1', port: adminPort } },
    // Each memory gateway keeps its state in a file of its own, as shipped, away from the work tree.
    store: {
      type: v.store,
      memory: { file: join(dir, `${v.id}.store.json`) },
      // Stretched: on a busy machine a gateway's first connection can take longer than the default.
      redis: { url: redisUrl ?? 'redis://127.0.0.1:1', connect_timeout_ms: 10_000 },
    },
    log: { level: 'info', access: v.access },
    limits: { invalid_key_throttle: { max_attempts: 1_000_000 } },
    prices: { watch_file: false },
    demo_accounts: false,
    ...(upstream ? { upstream } : {}),
    ...(v.workers ? { server: { workers: v.workers } } : {}),
    ...(v.burst ? { plans: { enterprise: { burst: { limit: 1000, window_s: 1 } } } } : {}),
    ...more,
  };
  const file = join(dir, `${v.id}.yaml`);
  writeFileSync(file, JSON.stringify(config));
  const logFile = join(dir, `${v.id}.log`);
  const env = {
    ...process.env,
    FUEL_GATEWAY_CONFIG: '',
    REDIS_URL: '',
    PORT: '',
    HOST: '',
    ADMIN_PORT: '',
    ADMIN_HOST: '',
    LOG_LEVEL: '',
  };
  // As shipped (npm start, the Dockerfile): see docs/performance.md on --no-memory-reducer.
  const proc = child(
    process.execPath,
    ['--no-memory-reducer', ...nodeArgs, 'dist/main.js', 'serve', '--config', file],
    {
      cwd: v.root ?? ROOT,
      env,
      stdio: ['ignore', openSync(logFile, 'a'), 'inherit'],
    },
    'server',
  );
  const base = `http://127.0.0.1:${port}`;
  await until(`gateway ${v.id}`, async () => (await fetch(`${base}/readyz`)).ok);
  return { ...v, pid: proc.pid, base, admin: `http://127.0.0.1:${adminPort}`, logFile };
}

/** The metering floor (bench/floor.mjs) over the same captured answer and keys. */
async function startFloor(answerFile, keysFile, prefix) {
  const port = await freePort();
  const proc = child(process.execPath, ['bench/floor.mjs', answerFile, String(port), keysFile, prefix], {}, 'server');
  const base = `http://127.0.0.1:${port}`;
  await until('floor', async () => (await fetch(`${base}/`)).status === 401);
  return { pid: proc.pid, base };
}

function machine() {
  const c = cpus();
  // The load average tells how far other work on the machine may have skewed the figures.
  return `${c.length} × ${c[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}, Node ${process.version}; load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} (1, 5, 15 min) at the end`;
}

function commit(root = ROOT) {
  const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }).toString().trim();
  const dirty =
    execFileSync('git', ['status', '--porcelain', '--', 'src', 'bench', 'package.json', ':!bench/RESULTS.md'], {
      cwd: root,
    })
      .toString()
      .trim() !== '';
  return dirty ? `${sha} + uncommitted changes` : sha;
}

/** Newest first: the entry goes right under the file's header. */
function record(entry) {
  const file = join(ROOT, 'bench/RESULTS.md');
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf('\n## ');
  const head = at === -1 ? `${text.trimEnd()}\n` : text.slice(0, at + 1);
  const rest = at === -1 ? '' : text.slice(at + 1);
  writeFileSync(file, `${head}\n${entry.trim()}\n\n${rest}`.replace(/\n{3,}/g, '\n\n'));
  console.log('\nrecorded in bench/RESULTS.md');
}

const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '–');

/**
 * Consume script calls and the requests they carried (HMGET runs once per request), and every
 * command Redis ran (INFO aside, and commands inside scripts counted too), from Redis's own counts.
 */
function scriptCalls(port) {
  if (!port) return { calls: 0, requests: 0, commands: 0 };
  const out = execFileSync('redis-cli', ['-p', String(port), 'INFO', 'commandstats']).toString();
  const count = (cmd) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(out)?.[1] ?? 0);
  let commands = 0;
  for (const m of out.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (m[1] !== 'info') commands += Number(m[2]);
  return { calls: count('evalsha') + count('eval'), requests: count('hmget'), commands };
}

/** Alternating rounds over every target: each round runs each target once, in the same order. */
async function measure(targets, redisPid, redisPort) {
  console.log(`warm-up: ${targets.length} targets × ${warmUp} s`);
  for (const t of targets) {
    await wrk({ url: t.base, prefix: t.prefix, keysFile: t.keysFile, seconds: warmUp, threads, connections });
    if (t.logFile) truncateSync(t.logFile, 0);
  }
  for (let r = 1; r <= rounds; r++) {
    for (const t of targets) {
      const before = scriptCalls(t.redis && redisPort);
      const res = await wrk({
        url: t.base,
        prefix: t.prefix,
        keysFile: t.keysFile,
        seconds,
        threads,
        connections,
        cpuOf: { gw: t.pids, redis: t.redis ? [redisPid] : [], lb: t.lbPid ? [t.lbPid] : [] },
      });
      const after = scriptCalls(t.redis && redisPort);
      res.rss = t.pids.reduce((sum, pid) => sum + (pid ? rssMiB(pid) : 0), 0);
      res.script = {
        calls: after.calls - before.calls,
        requests: after.requests - before.requests,
        commands: after.commands - before.commands,
      };
      t.runs.push(res);
      if (t.logFile) truncateSync(t.logFile, 0);
      console.log(
        `round ${r} ${t.label.padEnd(34)} ${fmt(res.rps).padStart(7)} req/s  p99 ${fmt(res.p99, 2)} ms  errors ${res.errors}`,
      );
    }
  }
}

function table(targets) {
  const lines = [
    '| target | req/s | × bare | p50 ms | p99 ms | p99 × bare | errors | gateway CPU µs/req | Redis CPU µs/req | Redis commands/req | requests per script call |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const perRound = [
    '| target | server user µs/req | server system µs/req | × bare (user + system) | Redis µs/req | wrk µs/req | RSS MiB |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  const notes = [];
  for (const t of targets) {
    const ref = targets.find((x) => x.bare && x.endpoint === t.endpoint);
    // A ratio is taken within each round (the two ran back to back), then the median of those.
    const ratio = (f) => median(t.runs.map((run, i) => f(run) / f(ref.runs[i])));
    const total = t.runs.reduce((s, r) => s + r.requests, 0);
    const perReq = (k) => (t.runs.reduce((s, r) => s + r.cpu[k], 0) / total) * 1e6;
    lines.push(
      `| ${t.label} | ${fmt(median(t.runs.map((r) => r.rps)))} | ${
        t.bare
          ? '1'
          : fmt(
              ratio((r) => r.rps),
              2,
            )
      } | ${fmt(median(t.runs.map((r) => r.p50)), 2)} | ` +
        `${fmt(median(t.runs.map((r) => r.p99)), 2)} | ${
          t.bare
            ? '1'
            : fmt(
                ratio((r) => r.p99),
                2,
              )
        } | ${t.runs.reduce((s, r) => s + r.errors - (t.refusal ? r.refused : 0), 0)} | ` +
        `${fmt(perReq('gw'), 1)} | ${t.redis ? fmt(perReq('redis'), 1) : '–'} | ` +
        `${t.redis ? fmt(t.runs.reduce((s, r) => s + r.script.commands, 0) / total, 2) : '–'} | ` +
        `${t.redis ? fmt(t.runs.reduce((s, r) => s + r.script.requests, 0) / t.runs.reduce((s, r) => s + r.script.calls, 0), 1) : '–'} |`,
    );
    // Each figure per round, then the median of the rounds with their range.
    const spread = (f, d = 1) => {
      const xs = t.runs.map(f);
      return `${fmt(median(xs), d)} (${fmt(Math.min(...xs), d)}–${fmt(Math.max(...xs), d)})`;
    };
    const us = (r, k, part) => ((r.split[k]?.[part] ?? 0) / r.requests) * 1e6;
    const cpuRatio = (r, i) =>
      (us(r, 'gw', 'user') + us(r, 'gw', 'system')) / (us(ref.runs[i], 'gw', 'user') + us(ref.runs[i], 'gw', 'system'));
    perRound.push(
      `| ${t.label} | ${spread((r) => us(r, 'gw', 'user'))} | ${spread((r) => us(r, 'gw', 'system'))} | ${
        t.bare ? '1' : spread(cpuRatio, 2)
      } | ${t.redis ? spread((r) => us(r, 'redis', 'user') + us(r, 'redis', 'system')) : '–'} | ${spread(
        (r) => (r.cpu.wrk / r.requests) * 1e6,
      )} | ${spread((r) => r.rss, 0)} |`,
    );
    if (t.reference) {
      const direct = (f) => median(t.runs.map((run, i) => f(run) / f(t.reference.runs[i])));
      notes.push(
        `${t.label}: ${fmt(
          direct((r) => r.rps),
          2,
        )} × the req/s direct, p99 ${fmt(
          direct((r) => r.p99),
          2,
        )} × direct; HAProxy CPU ${fmt(perReq('lb'), 1)} µs/req.`,
      );
    }
    if (t.perRound)
      notes.push(
        `${t.label}: gateway CPU µs per refusal by round ${t.runs.map((r) => fmt((r.cpu.gw / r.requests) * 1e6, 1)).join(', ')}.`,
      );
  }
  return [lines.join('\n'), '', perRound.join('\n'), '', ...notes.map((n) => `- ${n}`)].join('\n');
}

const VARIANTS = [
  { id: 'memory-off', label: 'memory, log off', store: 'memory', access: false },
  { id: 'memory-on', label: 'memory, log on', store: 'memory', access: true },
  { id: 'redis-off', label: 'Redis, log off', store: 'redis', access: false },
  { id: 'redis-on', label: 'Redis, log on', store: 'redis', access: true },
  // A burst limit on every account, high enough never to refuse: what the check itself costs.
  // Only with --only (it is not in the default set) and never run from a --before checkout,
  // whose config may not know the setting.
  { id: 'redis-burst', label: 'Redis, log off, burst on', store: 'redis', access: false, burst: true, optIn: true },
  // Traces on (issue 42), every span exported to a loopback sink that answers 200. Only with --only.
  {
    id: 'memory-trace-0.01',
    label: 'memory, log on, traces 0.01',
    store: 'memory',
    access: true,
    trace: 0.01,
    optIn: true,
  },
  { id: 'memory-trace-1', label: 'memory, log on, traces 1.0', store: 'memory', access: true, trace: 1, optIn: true },
];

/** An OTLP/HTTP endpoint that takes every export and answers 200: what the traced variants send to. */
async function traceSink() {
  const port = await freePort();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end());
  });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  server.unref();
  return `http://127.0.0.1:${port}/v1/traces`;
}

/** The variant, and before it the same from the `--before` checkout. */
function withBefore(v) {
  return before && !v.burst ? [{ ...v, id: `${v.id}-before`, label: `before: ${v.label}`, root: before }, v] : [v];
}

async function comparison(scaling) {
  const cores = cpus().length;
  const variants = scaling
    ? [1, cores].flatMap((w) => [
        {
          id: `redis-off-w${w}`,
          label: `Redis, log off, ${w} worker${w > 1 ? 's' : ''}`,
          store: 'redis',
          access: false,
          workers: w,
        },
        {
          id: `redis-on-w${w}`,
          label: `Redis, log on, ${w} worker${w > 1 ? 's' : ''}`,
          store: 'redis',
          access: true,
          workers: w,
        },
      ])
    : VARIANTS.filter((v) => wanted('metered') && ((!only && !v.optIn) || only.split(',').includes(v.id))).flatMap(
        withBefore,
      );
  const endpoints = scaling ? ['simple'] : ['simple', 'current'];
  const extra = !scaling && (wanted('refusals') || wanted('haproxy'));
  const redis = variants.some((v) => v.store === 'redis') || extra ? await startRedis() : null;
  const redisKeys = redis ? await seedRedis(redis.url, accounts, 'redis') : null;
  const gateways = [];
  const sink = variants.some((v) => v.trace !== undefined) ? await traceSink() : null;
  for (const v of variants) {
    const traced =
      v.trace === undefined ? {} : { telemetry: { traces: { enabled: true, endpoint: sink, sample_ratio: v.trace } } };
    const gw = await startGateway(v, redis?.url, [], undefined, traced);
    gw.keysFile = v.store === 'redis' ? redisKeys : await seedAdmin(gw.admin, accounts, v.id);
    gw.pids = family(gw.pid);
    gateways.push(gw);
  }
  const targets = [];
  // The rows beside the variants run on Redis gateways with the access log on, as the issue measures.
  const redisOn = withBefore(VARIANTS.find((v) => v.id === 'redis-on'));
  const extras = [];
  if (!scaling && wanted('refusals'))
    extras.push(...(await refusalTargets({ dir, startGateway, redisUrl: redis.url, variants: redisOn, scanKeys })));
  if (!scaling && wanted('haproxy'))
    extras.push(
      ...(await haproxyTargets({ dir, startGateway, redisUrl: redis.url, variants: redisOn, keysFile: redisKeys })),
    );
  // The bare server needs a gateway's answer to copy: one of the extra rows' when no variant runs.
  const answering = extras.find((t) => t.answersKeys);
  const copied = gateways[0] ?? (answering ? { base: answering.base, keysFile: redisKeys } : null);
  const firstKey = copied ? readFileSync(copied.keysFile, 'utf8').split('\n')[0] : '';
  for (const e of copied ? (gateways.length > 0 ? endpoints : ['simple']) : []) {
    const bare = await startBare(`${copied.base}${ENDPOINTS[e]}${firstKey}`, join(dir, `${e}.json`));
    // The references rotate over the first gateway's keys (the floor knows those accounts).
    const reference = (label, proc, extra = {}) => ({
      label: `${label}, ${e}`,
      endpoint: e,
      base: proc.base,
      prefix: ENDPOINTS[e],
      keysFile: copied.keysFile,
      pids: [proc.pid],
      runs: [],
      ...extra,
    });
    targets.push(reference('bare node:http', bare, { bare: true }));
    if (!scaling) targets.push(reference('metering floor', await startFloor(bare.file, copied.keysFile, ENDPOINTS[e])));
    for (const gw of gateways) {
      targets.push({
        label: `${gw.label}, ${e}`,
        endpoint: e,
        base: gw.base,
        prefix: ENDPOINTS[e],
        keysFile: gw.keysFile,
        pids: gw.pids,
        redis: gw.store === 'redis',
        logFile: gw.logFile,
        runs: [],
      });
    }
  }
  targets.push(...extras);
  if (!scaling && wanted('cache') && (!only || only.split(',').includes('pass-through')))
    targets.push(...(await passThroughTargets()));
  const lb = !scaling && wanted('haproxy') ? `; HAProxy ${await haproxyVersion()}` : '';
  const pin = PINNED ? ' Pinned (--pin): servers under test on core 0, wrk and Redis on core 1, with taskset.' : '';
  const setup = `wrk -t${threads} -c${connections}, ${seconds} s per run, ${rounds} alternating rounds, ${accounts} accounts rotated by bench/rotate.lua${wanted('refusals') ? ` (the unknown-key scan: ${scanKeys} distinct made-up keys)` : ''}${lb}`;
  console.log(setup);
  await measure(targets, redis?.pid, redis?.port);
  const out = table(targets);
  console.log(`\n${out}`);
  const some = option('rows', '') ? `, rows ${rows.join(',')}` : '';
  const kind = `${scaling ? 'workers (scaling)' : only ? `variants ${only}` : 'comparison'}${some}${before ? ', before and after' : ''}`;
  const against = before ? ` Before: commit ${commit(before)} (${before}).` : '';
  return `## ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${kind}\n\nCommit ${commit()}.${against} Machine: ${machine()}.\n${setup}; medians; × bare is the median of per-round ratios to the bare server on the same endpoint; CPU per request is user + system time over all rounds; the second table gives each figure per round, as the median of the rounds (range), from /proc.${pin}\n\n${out}\n`;
}

/**
 * The pass-through variant: a memory-store gateway (log off) in front of bench/origin.mjs, every
 * request a cache hit on one history URL (the key rotates, the cache key does not), against the
 * origin served directly on the same path, as its `× bare` reference.
 */
async function passThroughTargets() {
  const originPort = await freePort();
  const proc = child(process.execPath, ['bench/origin.mjs', String(originPort)], {}, 'server');
  const origin = `http://127.0.0.1:${originPort}`;
  await until('bench origin', async () => (await fetch(`${origin}/`)).ok);
  const out = [];
  for (const v of withBefore({ id: 'pass-through', label: 'memory, log off', store: 'memory', access: false }))
    out.push(...(await cacheHit(v, origin, out.length === 0 ? proc.pid : null)));
  return out;
}

/** One gateway's cache hit on the history URL, after (when `originPid`) the origin served directly. */
async function cacheHit(v, origin, originPid) {
  const gw = await startGateway(v, undefined, [], {
    url: origin,
    api_key: 'bench-service-key',
    poll_interval_ms: 60_000,
    proxy_paths: ['/v2/*'],
  });
  const keysFile = await seedAdmin(gw.admin, accounts, v.id);
  const prefix = '/v2/historical.php?year=2026&region=inland&api_key=';
  const key = readFileSync(keysFile, 'utf8').split('\n')[0];
  const first = await fetch(`${gw.base}${prefix}${key}`);
  await first.arrayBuffer();
  const hit = await fetch(`${gw.base}${prefix}${key}`);
  await hit.arrayBuffer();
  if (hit.headers.get('x-cache') !== 'HIT')
    throw new Error(`pass-through: expected a cache hit, got ${hit.headers.get('x-cache')}`);
  const base = { endpoint: 'pass-through', prefix, keysFile };
  const direct = {
    ...base,
    label: 'origin served directly, pass-through',
    bare: true,
    base: origin,
    pids: [originPid],
    runs: [],
  };
  return [
    ...(originPid === null ? [] : [direct]),
    {
      ...base,
      label: `${v.root ? 'before: ' : ''}gateway cache hit, pass-through`,
      base: gw.base,
      pids: family(gw.pid),
      logFile: gw.logFile,
      runs: [],
    },
  ];
}

/** Long run over many distinct keys, Redis store, access log on: RSS at start, along the way and at the end. */
async function soak() {
  const minutes = Number(option('minutes', 10));
  const keys = Number(option('keys', 100_000));
  const redis = await startRedis();
  console.log(`seeding ${keys} accounts`);
  const keysFile = await seedRedis(redis.url, keys, 'soak');
  const gw = await startGateway({ id: 'soak', label: 'soak', store: 'redis', access: true }, redis.url);
  const samples = [[0, rssMiB(gw.pid)]];
  console.log(
    `RSS at start: ${fmt(samples[0][1], 1)} MiB; wrk -t${threads} -c${connections} for ${minutes} min over ${keys} keys`,
  );
  const started = Date.now();
  const sampler = setInterval(() => {
    const s = [(Date.now() - started) / 60_000, rssMiB(gw.pid)];
    samples.push(s);
    truncateSync(gw.logFile, 0);
    console.log(`${fmt(s[0], 1)} min: RSS ${fmt(s[1], 1)} MiB`);
  }, 30_000);
  const cpuBefore = cpuSeconds([gw.pid]);
  const res = await wrk({
    url: gw.base,
    prefix: ENDPOINTS.simple,
    keysFile,
    seconds: minutes * 60,
    threads,
    connections,
  });
  clearInterval(sampler);
  await sleep(1000);
  samples.push([(Date.now() - started) / 60_000, rssMiB(gw.pid)]);
  const end = samples[samples.length - 1][1];
  const atOne = samples.find(([m]) => m >= 1)?.[1] ?? samples[0][1];
  const summary =
    `RSS at start ${fmt(samples[0][1], 1)} MiB, after 1 min ${fmt(atOne, 1)} MiB, at the end ${fmt(end, 1)} MiB ` +
    `(max ${fmt(Math.max(...samples.map((s) => s[1])), 1)} MiB); ${res.requests} requests (${fmt(res.rps)} req/s), ` +
    `p99 ${fmt(res.p99, 2)} ms, ${res.errors} errors, gateway CPU ${fmt(((cpuSeconds([gw.pid]) - cpuBefore) / res.requests) * 1e6, 1)} µs/req`;
  console.log(`\n${summary}`);
  const rows = samples.map(([m, r]) => `${fmt(m, 1)} min ${fmt(r)} MiB`).join(', ');
  return `## ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: soak\n\nCommit ${commit()}. Machine: ${machine()}.\nRedis store, access log on, wrk -t${threads} -c${connections} for ${minutes} min over ${keys} distinct keys.\n\n${summary}.\n\nSamples: ${rows}.\n`;
}

const CATEGORIES = [
  [/^node:(_http|http)/, 'node:http'],
  [/^node:(net|internal\/(stream|net|js_stream|streams)|stream|internal\/stream_base)/, 'sockets and streams'],
  [/^node:internal\/(process\/task_queues|timers)|^node:timers/, 'ticks, microtasks, timers'],
  [/^node:/, 'other node internals'],
  [/\/dist\//, 'gateway code (dist/)'],
  [/node_modules\/(ioredis|@ioredis|redis-parser|denque|cluster-key-slot|standard-as-callback)/, 'ioredis'],
  [
    /node_modules\/(pino|sonic-boom|fast-redact|quick-format-unescaped|atomic-sleep|on-exit-leak-free|thread-stream)/,
    'pino',
  ],
  [/node_modules\/(prom-client|tdigest|bintrees)/, 'prom-client'],
  [/node_modules\/lru-cache/, 'lru-cache'],
  [/node_modules\//, 'other packages'],
];

/**
 * Where a process's CPU went between two moments (monotonic µs, the clock V8 stamps samples
 * with): shares of samples by category and the top functions by self time.
 */
function summarise(profile, fromUs, toUs) {
  const hits = new Map();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i];
    if (at >= fromUs && at <= toUs) hits.set(profile.samples[i], (hits.get(profile.samples[i]) ?? 0) + 1);
  }
  const self = new Map();
  let total = 0;
  for (const n of profile.nodes) {
    const { functionName, url, lineNumber } = n.callFrame;
    const count = hits.get(n.id) ?? 0;
    if (functionName === '(idle)' || count === 0) continue;
    total += count;
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${lineNumber + 1}`;
    const e = self.get(key) ?? { hits: 0, url, functionName };
    e.hits += count;
    self.set(key, e);
  }
  const byCategory = new Map();
  for (const e of self.values()) {
    const name =
      e.functionName === '(garbage collector)'
        ? 'garbage collector'
        : e.functionName === '(program)'
          ? 'native (program: syscalls, V8, libuv)'
          : e.url === ''
            ? 'native builtins'
            : (CATEGORIES.find(([re]) => re.test(e.url))?.[1] ?? 'other');
    byCategory.set(name, (byCategory.get(name) ?? 0) + e.hits);
  }
  const pct = (h) => `${((h / total) * 100).toFixed(1)}%`;
  const cats = [...byCategory].sort((a, b) => b[1] - a[1]).map(([k, h]) => `| ${k} | ${pct(h)} |`);
  const top = [...self]
    .sort((a, b) => b[1].hits - a[1].hits)
    .slice(0, 25)
    .map(([k, e]) => `| ${pct(e.hits)} | \`${k}\` |`);
  return `| where | share of busy CPU |\n|---|---:|\n${cats.join('\n')}\n\n| self | function |\n|---:|---|\n${top.join('\n')}`;
}

/** One variant under --cpu-prof for one wrk run on simple-current. */
async function profile(id) {
  const v = VARIANTS.find((x) => x.id === id);
  if (!v) throw new Error(`--profile takes one of ${VARIANTS.map((x) => x.id).join(', ')}`);
  const redis = v.store === 'redis' ? await startRedis() : null;
  const keys = redis ? await seedRedis(redis.url, accounts, 'redis') : null;
  const profDir = join(dir, 'profile');
  const gw = await startGateway(v, redis?.url, ['--cpu-prof', '--cpu-prof-dir', profDir]);
  const keysFile = keys ?? (await seedAdmin(gw.admin, accounts, v.id));
  await wrk({ url: gw.base, prefix: ENDPOINTS.simple, keysFile, seconds: 3, threads, connections });
  const from = process.hrtime.bigint() / 1000n;
  const res = await wrk({ url: gw.base, prefix: ENDPOINTS.simple, keysFile, seconds, threads, connections });
  const to = process.hrtime.bigint() / 1000n;
  console.log(`${v.label}, simple: ${fmt(res.rps)} req/s under the profiler`);
  process.kill(gw.pid, 'SIGTERM');
  await until('the profile', async () => readdirSync(profDir).some((f) => f.endsWith('.cpuprofile')));
  await sleep(500);
  const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  const text = readFileSync(join(profDir, file), 'utf8');
  if (option('save-profile', '')) writeFileSync(option('save-profile', ''), text);
  const out = summarise(JSON.parse(text), Number(from), Number(to));
  console.log(`\n${out}`);
  return `## ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: profile of ${v.label}, simple-current\n\nCommit ${commit()}. Machine: ${machine()}.\nwrk -t${threads} -c${connections} for ${seconds} s under \`node --cpu-prof\` (${fmt(res.rps)} req/s; the profiler slows it); samples taken during that run only.\n\n${out}\n`;
}

let code = 0;
const stop = () =>
  stopAll().finally(() => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  });
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
process.once('SIGHUP', stop);
// A reader that went away (`npm run bench | head`): stop the servers, as for Ctrl-C.
process.stdout.on('error', (err) => (err.code === 'EPIPE' ? stop() : Promise.reject(err)));
try {
  const entry = option('profile', '')
    ? await profile(option('profile', ''))
    : flag('soak')
      ? await soak()
      : flag('topology')
        ? await topologyBench({
            seconds,
            rounds,
            connections,
            threads,
            accounts,
            header: (kind) =>
              `## ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${kind}\n\nCommit ${commit()}. Machine: ${machine()}.`,
          })
        : await comparison(flag('workers'));
  if (!flag('no-record')) record(entry);
} catch (err) {
  console.error(err);
  code = 1;
} finally {
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
