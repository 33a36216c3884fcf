// The usage ledger on Redis, measured (docs/usage-records.md quotes the figures):
//  1. memory per account-day: a private redis-server, 10,000 accounts' ledgers of one 31-day
//     period written as the CONSUME script writes them (days hash with its record, counter, index
//     of periods), INFO used_memory before and after, and MEMORY USAGE of one days hash;
//  2. the RSS of a streamed export: 100,000 accounts with 31 days each (two periods per account,
//     as a monthly cycle anchored mid-month gives), then `fuel-gateway usage export` (the CLI,
//     the same code as GET /admin/usage) run as a child, its peak RSS (VmHWM) read from /proc.
// Usage: npm run build && node bench/usage-export.mjs [accounts]   (needs redis-server on PATH)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { freePort, ROOT, sleep, until } from './lib.mjs';

const ACCOUNTS = Number(process.argv[2] ?? 100_000);
const MEMORY_ACCOUNTS = 10_000;
const DAY_MS = 86_400_000;
// December 2026 in Johannesburg; periods from 10:29 on the 15th.
const P1 = Date.parse('2026-11-15T10:29:00+02:00');
const P2 = Date.parse('2026-12-15T10:29:00+02:00');
const P3 = Date.parse('2027-01-15T10:29:00+02:00');
const RETENTION = 400 * DAY_MS;
const day = (d) => `2026-12-${String(d).padStart(2, '0')}`;

function seedAccount(pipe, prefix, i, periods) {
  const id = `acct_${String(i).padStart(8, '0')}`;
  const tag = `${prefix}{acct:${id}}`;
  pipe.hset(`${tag}:account`, {
    id,
    status: 'active',
    plan: 'starter',
    anchor: '2026-10-15T10:29:00+02:00',
    label: `customer ${i}`,
    created_at: '2026-10-15T08:29:00.000Z',
    revision: '1',
    key_hash: i.toString(16).padStart(64, '0'),
  });
  pipe.zadd(`${prefix}accounts`, 0, id);
  for (const [start, end, from, to] of periods) {
    const days = { plan: 'starter', kind: 'monthly', limit: '2000', start: String(start), end: String(end) };
    let used = 0;
    for (let d = from; d <= to; d++) {
      const n = 1 + ((i + d) % 60);
      days[day(d)] = String(n);
      used += n;
    }
    pipe.hset(`${tag}:days:${start}`, days);
    pipe.pexpireat(`${tag}:days:${start}`, end + RETENTION);
    pipe.set(`${tag}:used:${start}`, String(used), 'PXAT', end + RETENTION);
    pipe.zadd(`${tag}:periods`, end + RETENTION, String(start));
  }
  pipe.pexpireat(`${tag}:periods`, periods.at(-1)[1] + RETENTION);
}

async function seed(redis, prefix, count, periods) {
  for (let i = 0; i < count; i += 1000) {
    const pipe = redis.pipeline();
    for (let j = i; j < Math.min(count, i + 1000); j++) seedAccount(pipe, prefix, j, periods);
    await pipe.exec();
  }
}

const usedMemory = async (redis) => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))[1]);

async function main() {
  const port = await freePort();
  const server = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const redis = new Redis({ port, lazyConnect: true });
  try {
    await until('redis', async () => {
      await redis.connect().catch(() => undefined);
      return (await redis.ping()) === 'PONG';
    });

    // 1. Memory per account-day: one period of 31 days per account.
    const before = await usedMemory(redis);
    await seed(redis, 'mem:', MEMORY_ACCOUNTS, [[P2 - 14 * DAY_MS, P2 + 17 * DAY_MS, 1, 31]]);
    const ledger = (await usedMemory(redis)) - before;
    const accountKeys = Number(await redis.memory('USAGE', 'mem:{acct:acct_00000000}:account'));
    const perAccountDay = (ledger - MEMORY_ACCOUNTS * accountKeys) / (MEMORY_ACCOUNTS * 31);
    const hash = Number(await redis.memory('USAGE', `mem:{acct:acct_00000000}:days:${P2 - 14 * DAY_MS}`));
    console.log(
      `memory: ${MEMORY_ACCOUNTS} accounts x 31 days: ${ledger} bytes used_memory (accounts included); ` +
        `ledger without the account hashes ${perAccountDay.toFixed(1)} bytes per account-day; ` +
        `one 31-day days hash with its record: ${hash} bytes (${(hash / 31).toFixed(1)} per day)`,
    );
    await redis.flushall();

    // 2. The export's RSS.
    const seeded = Date.now();
    await seed(redis, 'fpg:', ACCOUNTS, [
      [P1, P2, 1, 15],
      [P2, P3, 15, 31],
    ]);
    console.log(`seeded ${ACCOUNTS} accounts x 31 days in ${((Date.now() - seeded) / 1000).toFixed(1)} s`);
    for (const [verb, format] of [
      ['export', 'csv'],
      ['export', 'json'],
      ['periods', 'csv'],
    ]) {
      const started = Date.now();
      const child = spawn(
        process.execPath,
        ['dist/main.js', 'usage', verb, '--from', day(1), '--to', day(31), '--format', format],
        {
          cwd: ROOT,
          env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${port}` },
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      let bytes = 0;
      let lines = 0;
      child.stdout.on('data', (c) => {
        bytes += c.length;
        for (const b of c) if (b === 10) lines++;
      });
      let peak = 0;
      const exited = new Promise((resolve) => child.on('exit', resolve));
      let done = false;
      void exited.then(() => {
        done = true;
      });
      while (!done) {
        try {
          const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
          peak = Math.max(peak, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
        } catch {
          // exited between the check and the read
        }
        await sleep(20);
      }
      const code = await exited;
      console.log(
        `usage ${verb} --format ${format}: exit ${code}, ${lines} lines, ${(bytes / 1e6).toFixed(1)} MB in ` +
          `${((Date.now() - started) / 1000).toFixed(1)} s, peak RSS ${(peak / 1024).toFixed(0)} MiB`,
      );
    }
  } finally {
    redis.disconnect();
    server.kill('SIGKILL');
  }
}

await main();
