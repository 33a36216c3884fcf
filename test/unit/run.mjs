// `npm run test:unit`: the quick inner loop. The listed files need no child process and no Redis
// (memory store, real HTTP on loopback). They run through the suite's esbuild loader
// (test/loader), without tap's runner and its coverage, which are `npm test`'s job, a few files
// to a node process (batch.mjs): a file's own process cost about 1 s of CPU before its first test
// (node, tap, the loader's thread, the app's modules), most of what a small file costs.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { balance, lastTimes, TIMES, unitFiles } from './files.mjs';

const LOADER = new URL('../loader/register.mjs', import.meta.url).href;
const BATCH = new URL('./batch.mjs', import.meta.url).pathname;
const only = process.argv.slice(2);
const files = unitFiles();
const chosen = only.length > 0 ? files.filter((f) => only.some((o) => f.includes(o))) : files;
// Three processes a core: most of a file's time is waiting on timers and loopback I/O.
const WORKERS = Math.max(4, availableParallelism() * 3);
// One batch a worker, balanced by the files' last times (the longest file to the batch with the
// least so far): each more process costs about 1.2 s of CPU before its first test, and beside
// the bench, where CPU is what the run waits for, two batches a worker took longer.
const previous = lastTimes();
const queue = balance(chosen, WORKERS, previous);
const started = Date.now();
const failed = [];
const times = { ...previous };
let points = 0;

/** The output of each file of a batch: its tests' lines end with its `# fpg-file` comment. */
function perFile(out) {
  const done = new Map();
  let from = 0;
  for (const m of out.matchAll(/^# fpg-file (\S+) (\d+) (\d+)$/gm)) {
    done.set(m[1], { out: out.slice(from, m.index), ms: Number(m[2]), cpuMs: Number(m[3]) });
    from = (m.index ?? 0) + m[0].length;
  }
  return { done, rest: out.slice(from) };
}

function run(batch) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', LOADER, BATCH], {
      env: {
        ...process.env,
        FPG_UNIT_FILES: batch.files.join('\n'),
        TAP_TIMEOUT: process.env.TAP_TIMEOUT ?? '120',
        // The quick loop samples fewer random heads than npm test (test/http/fuzz.test.ts).
        FPG_FUZZ_RUNS: process.env.FPG_FUZZ_RUNS ?? '1000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => {
      // Assertions and tests alike (tap's summary of a batch counts only part of them).
      points += out.match(/^\s*ok \d+ /gm)?.length ?? 0;
      const { done, rest } = perFile(out);
      const before = failed.length;
      for (const file of batch.files) {
        const mine = done.get(file);
        // A file fails with a top-level `not ok`, or with no test at all (its tests never ran).
        const ok = mine !== undefined && /^ok \d+ /m.test(mine.out) && !/^not ok /m.test(mine.out);
        if (mine) times[file] = mine.ms;
        if (!ok) failed.push({ file, out: mine ? mine.out : `${rest}\n(exit ${code})` });
        const ms = mine ? ` ${(mine.ms / 1000).toFixed(1)} s (CPU ${(mine.cpuMs / 1000).toFixed(1)} s)` : '';
        process.stdout.write(`${ok ? 'ok' : 'FAIL'} ${file}${ms}\n`);
      }
      // Every file passed, yet the process failed (a teardown at its end): the batch fails.
      if (code !== 0 && failed.length === before) failed.push({ file: batch.files.join(' '), out });
      resolve();
    });
  });
}

async function worker() {
  for (let b = queue.shift(); b !== undefined; b = queue.shift()) await run(b);
}
await Promise.all(Array.from({ length: WORKERS }, worker));
for (const { file, out } of failed) process.stdout.write(`\n==== ${file}\n${out}`);
try {
  mkdirSync(new URL('.', TIMES), { recursive: true });
  writeFileSync(TIMES, JSON.stringify(times));
} catch {
  // Only the batches of the next run depend on it.
}
const secs = ((Date.now() - started) / 1000).toFixed(1);
process.stdout.write(
  `\n${failed.length === 0 ? 'passed' : `${failed.length} file(s) failed`}: ${points} test points passed in ${secs} s\n`,
);
process.exitCode = failed.length === 0 ? 0 : 1;
