// Process plumbing for bench/run.mjs: children tracked and stopped by PID, free ports, CPU and
// RSS read from /proc, one wrk run.
import { execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TICKS_PER_SECOND = 100; // USER_HZ on Linux
const children = new Set();

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export async function until(what, cond, ms = 30_000) {
  const end = Date.now() + ms;
  while (!(await cond().catch(() => false))) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * `--pin`: the server under test runs on core 0, and what loads or serves it (wrk, Redis) on core
 * 1, so that the two do not take turns on one core and a server's CPU per request resolves.
 * taskset execs the command, so the PID is the command's own.
 */
export const PINNED = process.argv.includes('--pin');
const CORES = { server: '0', load: '1' };
const pinned = (role, cmd, args) => (PINNED && role ? ['taskset', ['-c', CORES[role], cmd, ...args]] : [cmd, args]);

/** Spawns a child that stopAll() ends by its PID; `role` ('server' or 'load') pins it under --pin. */
export function child(cmd, args, opts = {}, role = undefined) {
  const [file, argv] = pinned(role, cmd, args);
  const c = spawn(file, argv, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], ...opts });
  children.add(c);
  c.once('exit', () => children.delete(c));
  return c;
}

// However the bench ends (an exception, stdout closed under `| head`, which node reports as an
// EPIPE error), no child outlives it: 'exit' handlers run synchronously, so this is a SIGKILL.
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** SIGTERM to every child still running, SIGKILL to those that do not exit within 5 s. */
export async function stopAll() {
  const running = [...children].filter((c) => c.exitCode === null && c.signalCode === null);
  const exits = running.map((c) => new Promise((r) => c.once('exit', r)));
  for (const c of running) c.kill('SIGTERM');
  const timer = setTimeout(() => {
    for (const c of running) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }, 5000);
  await Promise.all(exits);
  clearTimeout(timer);
}

/** The PIDs of a process and all its descendants (a gateway's workers). */
export function family(pid) {
  const parents = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(name), ppid);
    } catch {
      // exited while we looked
    }
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) for (const [p, pp] of parents) if (pp === out[i]) out.push(p);
  return out;
}

/** CPU seconds used so far by the given PIDs, user and system apart (utime, stime in /proc/PID/stat). */
export function cpuTimes(pids) {
  let user = 0;
  let system = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      user += Number(fields[11]);
      system += Number(fields[12]);
    } catch {
      // exited
    }
  }
  return { user: user / TICKS_PER_SECOND, system: system / TICKS_PER_SECOND };
}

/** CPU seconds (user + system) used so far by the given PIDs. */
export function cpuSeconds(pids) {
  const { user, system } = cpuTimes(pids);
  return user + system;
}

/** CPU seconds of this process's children that have exited and been waited for (wrk, after its run). */
function reapedChildrenSeconds() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
}

export function rssMiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * One wrk run (`-t threads -c connections`) rotating over the keys in `keysFile`. Returns wrk's
 * figures plus the CPU seconds `cpuOf` PIDs used during it.
 */
export function wrk({ url, prefix, keysFile, seconds, threads, connections, cpuOf = {} }) {
  const before = Object.fromEntries(Object.entries(cpuOf).map(([k, pids]) => [k, cpuTimes(pids)]));
  const wrkBefore = reapedChildrenSeconds();
  return new Promise((resolve, reject) => {
    const args = [
      '-t',
      String(threads),
      '-c',
      String(connections),
      '-d',
      `${seconds}s`,
      '--timeout',
      '2s',
      '-s',
      'bench/rotate.lua',
      url,
      '--',
      prefix,
      keysFile,
    ];
    const [file, argv] = pinned('load', 'wrk', args);
    execFile(file, argv, { cwd: ROOT, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`wrk failed: ${err.message}\n${stderr}`));
      const line = stdout.split('\n').find((l) => l.startsWith('{"requests"'));
      if (!line) return reject(new Error(`no summary from wrk:\n${stdout}`));
      const r = JSON.parse(line);
      const used = Object.entries(cpuOf).map(([k, pids]) => {
        const now = cpuTimes(pids);
        return [k, { user: now.user - before[k].user, system: now.system - before[k].system }];
      });
      const cpu = Object.fromEntries(used.map(([k, c]) => [k, c.user + c.system]));
      cpu.wrk = reapedChildrenSeconds() - wrkBefore;
      resolve({
        rps: r.requests / (r.duration_us / 1e6),
        requests: r.requests,
        p50: r.p50_us / 1000,
        p99: r.p99_us / 1000,
        errors: r.connect + r.read + r.write + r.status + r.timeout,
        /** Answers other than 2xx and 3xx (a refusal row expects them). */
        refused: r.status,
        cpu,
        /** User and system CPU seconds apart, per `cpuOf` entry. */
        split: Object.fromEntries(used),
      });
    });
  });
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** One answer exactly as the gateway wrote it, minus the headers node:http adds by itself. */
function capture(url) {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => {
        const headers = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i];
          if (!/^(date|connection|keep-alive)$/i.test(name)) headers.push([name, res.rawHeaders[i + 1]]);
        }
        resolve({ status: res.statusCode, headers, body });
      });
    })
      .on('error', reject)
      .end();
  });
}

/** The bare server (bench/bare.mjs) writing the answer at `answerUrl`, captured into `file`. */
export async function startBare(answerUrl, file) {
  writeFileSync(file, JSON.stringify(await capture(answerUrl)));
  const port = await freePort();
  const proc = child(process.execPath, ['bench/bare.mjs', file, String(port)], {}, 'server');
  const base = `http://127.0.0.1:${port}`;
  await until('bare', async () => (await fetch(`${base}/`)).ok);
  return { pid: proc.pid, base, file };
}
