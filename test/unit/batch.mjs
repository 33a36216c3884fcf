// Runs test files one after another in this process, so that they share one start of node, tap,
// the loader's thread and the app's modules (about 1 s of CPU a file, most of what a small file
// costs): `npm run test:unit` (run.mjs) starts a few such processes, and `npm test` runs the unit
// files in eight (shard-*.mjs). A file's tests are all done before the next file is imported,
// and each file starts with tap's default of one test at a time (a file's `t.jobs = 3` is its
// own). Each file's time and CPU are told in a `# fpg-file FILE MS CPU_MS` comment.
import { pathToFileURL } from 'node:url';
import t from 'tap';

export async function runFiles(files) {
  // tap's timeout is a file's: a batch has its files' worth.
  t.setTimeout(Number(process.env.TAP_TIMEOUT || 240) * 1000 * Math.max(1, files.length));
  const test = t.test.bind(t);
  let started = [];
  // The promise of each test a file starts, so the next file waits for them.
  t.test = (...args) => {
    const done = test(...args);
    started.push(done);
    return done;
  };
  // A file's clean-ups on the root (a gateway started at its top level) run when its tests are
  // done, as at its own process's end. Left to tap, the first one would also end the root as soon
  // as it is idle, before the next file is imported.
  let teardowns = [];
  t.teardown = (fn) => void teardowns.push(fn);
  // tap ends its root test when the process would exit (beforeExit), and a dynamic import waits
  // on the loader's thread without holding the event loop: held open until the last file is done.
  const hold = setInterval(() => undefined, 1 << 30);
  for (const file of files) {
    // A root already ended would run none of this file's tests and still pass: fail loudly.
    if (t.results) {
      process.stderr.write(`tap's root test ended before ${file} ran\n`);
      process.exit(1);
    }
    const t0 = Date.now();
    const cpu0 = process.cpuUsage();
    t.jobs = 1;
    started = [];
    try {
      await import(pathToFileURL(file).href);
    } catch (error) {
      test(`${file} loads`, async (tt) => tt.error(error));
    }
    await Promise.allSettled(started);
    for (const fn of teardowns)
      await Promise.resolve()
        .then(fn)
        .catch((error) => test(`${file}: its clean-up`, async (tt) => tt.error(error)));
    teardowns = [];
    const cpu = process.cpuUsage(cpu0);
    t.comment(`fpg-file ${file} ${Date.now() - t0} ${Math.round((cpu.user + cpu.system) / 1000)}`);
  }
  clearInterval(hold);
}

// run.mjs names the files in the environment, not argv: tap names a test's fixture directory
// after argv.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  await runFiles((process.env.FPG_UNIT_FILES ?? '').split('\n').filter(Boolean));
