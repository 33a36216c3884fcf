// `npm run test:unit`: the quick inner loop. The listed files need no child process and no Redis
// (memory store, real HTTP on loopback). Each runs as its own node process through the suite's
// esbuild loader (test/loader), without tap's runner and its coverage, which are `npm test`'s job.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

const LOADER = new URL('../loader/register.mjs', import.meta.url).href;
// Each file's last time, so that the longest start first, as jest orders its files: a 30 s file
// started last would hold the run 30 s after every other worker is idle.
const TIMES = new URL('../../node_modules/.cache/fpg-unit-times.json', import.meta.url);
const files = readFileSync(new URL('./files.txt', import.meta.url), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));
const lastTimes = (() => {
  try {
    return JSON.parse(readFileSync(TIMES, 'utf8'));
  } catch {
    return {};
  }
})();
const only = process.argv.slice(2);
const queue = (only.length > 0 ? files.filter((f) => only.some((o) => f.includes(o))) : [...files]).sort(
  (a, b) => (lastTimes[b] ?? Number.POSITIVE_INFINITY) - (lastTimes[a] ?? Number.POSITIVE_INFINITY),
);
const started = Date.now();
const failed = [];
const times = { ...lastTimes };
let asserts = 0;

function run(file) {
  return new Promise((done) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, ['--import', LOADER, file], {
      env: { ...process.env, TAP_TIMEOUT: process.env.TAP_TIMEOUT ?? '120' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => {
      const total = /# \{ total: (\d+), pass: (\d+)/.exec(out);
      if (total) asserts += Number(total[1]);
      if (code !== 0) failed.push({ file, out });
      times[file] = Date.now() - t0;
      process.stdout.write(
        `${code === 0 ? 'ok' : 'FAIL'} ${file}${total ? ` (${total[1]})` : ''} ${(times[file] / 1000).toFixed(1)} s\n`,
      );
      done();
    });
  });
}

async function worker() {
  for (let f = queue.shift(); f !== undefined; f = queue.shift()) await run(f);
}
// Three files a core: most of a file's time is waiting on timers and loopback I/O (the list's
// files take 350 s of wall time and 135 s of CPU one after another).
await Promise.all(Array.from({ length: Math.max(4, availableParallelism() * 3) }, worker));
for (const { file, out } of failed) process.stdout.write(`\n==== ${file}\n${out}`);
try {
  mkdirSync(new URL('.', TIMES), { recursive: true });
  writeFileSync(TIMES, JSON.stringify(times));
} catch {
  // Only the order of the next run depends on it.
}
const secs = ((Date.now() - started) / 1000).toFixed(1);
process.stdout.write(
  `\n${failed.length === 0 ? 'passed' : `${failed.length} file(s) failed`}: ${asserts} assertions in ${secs} s\n`,
);
process.exitCode = failed.length === 0 ? 0 : 1;
