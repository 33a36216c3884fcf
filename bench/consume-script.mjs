// Redis's cost of the consume script alone, per request: the real RedisStore and batcher of the
// built checkout at argv[2] (default: this one's dist) against a redis-server of its own on
// core 1, argv[3] accounts (10,000) each consumed argv[4] times (30) in batches of 30. Prints
// Redis's process CPU and the script's own time (INFO commandstats) per request, and commands
// per request. Alternate two checkouts' runs to compare (issue 43, docs/performance.md).
// node bench/consume-script.mjs [DIST] [ACCOUNTS] [ROUNDS]

import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const dist = process.argv[2] ?? new URL('../dist', import.meta.url).pathname;
const N = Number(process.argv[3] ?? 10000),
  ROUNDS = Number(process.argv[4] ?? 30),
  BATCH = 30;
const port = 7000 + Math.floor(Math.random() * 1000);
const srv = spawn('taskset', ['-c', '1', 'redis-server', '--port', String(port), '--save', '', '--appendonly', 'no'], {
  stdio: 'ignore',
});
await sleep(300);
const { default: pino } = await import('pino');
const { RedisStore } = await import(`${dist}/store/redis/redis-store.js`);
const store = new RedisStore(
  { url: `redis://127.0.0.1:${port}`, key_prefix: 'fpg:', command_timeout_ms: 5000, connect_timeout_ms: 2000 },
  pino({ level: 'silent' }),
);
const specs = [];
const now = Date.now();
for (let i = 0; i < N; i++) {
  const id = `acct_b${i}`;
  await store.accounts
    .createAccount({
      id,
      status: 'active',
      plan: 'developer',
      limit: null,
      anchor: '2026-11-01T00:00:00+02:00',
      label: 'b',
      created_at: '2026-11-01T00:00:00.000Z',
      revision: 1,
      keys: [
        {
          id: `key_${i}`,
          name: 'default',
          created_at: '2026-11-01T00:00:00.000Z',
          expires_at: null,
          scopes: ['current'],
          allowed_cidrs: [],
          last_used_on: null,
          hint: null,
          key_hash: `${i}`.padStart(64, 'a'),
        },
      ],
    })
    .catch((e) => {
      console.error(e.message);
      process.exit(1);
    });
  specs.push({
    accountId: id,
    revision: 1,
    periodId: '2026-11',
    limit: 1e9,
    cap: 1e9,
    expireAtMs: now + 86400000 * 40,
    record: { plan: 'developer', kind: 'monthly', startMs: now - 1000, endMs: now + 86400000 * 30 },
  });
}
const cpu = () => {
  const f = readFileSync(`/proc/${srv.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10000;
};
// warm up: each account's first consume opens its period
for (let i = 0; i < N; i += BATCH)
  await Promise.all(specs.slice(i, i + BATCH).map((s) => store.counting.consume(s, '2026-11-25')));
const redisCli = (...a) => execFileSync('redis-cli', ['-p', String(port), ...a]).toString();
redisCli('CONFIG', 'RESETSTAT');
const c0 = cpu(),
  t0 = Date.now();
let req = 0;
for (let r = 0; r < ROUNDS; r++)
  for (let i = 0; i < N; i += BATCH) {
    await Promise.all(specs.slice(i, i + BATCH).map((s) => store.counting.consume(s, '2026-11-25')));
    req += Math.min(BATCH, N - i);
  }
const c1 = cpu();
const cs = redisCli('INFO', 'commandstats');
let calls = 0;
let evalUsec = 0;
for (const l of cs.split('\n')) {
  const m = /cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(l);
  if (m) {
    if (m[1] !== 'info') calls += Number(m[2]);
    if (m[1] === 'evalsha') evalUsec = Number(m[3]);
  }
}
console.log(
  JSON.stringify({
    dist,
    requests: req,
    redisCpuUsPerReq: +((c1 - c0) / req).toFixed(2),
    evalshaUsecPerReq: +(evalUsec / req).toFixed(2),
    commandsPerReq: +(calls / req).toFixed(2),
    ms: Date.now() - t0,
  }),
);
await store.close();
srv.kill();
