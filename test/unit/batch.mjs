// One process of `npm run test:unit`: runs the test files it is given one after another, in this
// process, so that they share one start of node, tap, the loader's thread and the app's modules
// (about 1 s of CPU a file, most of what a small file costs). A file's tests are all done before
// the next file is imported, and each file starts with tap's default of one test at a time (a
// file's `t.jobs = 3` is its own). Each file's time goes to run.mjs as a `# fpg-file` comment.
import { pathToFileURL } from 'node:url';
import t from 'tap';

const test = t.test.bind(t);
let started = [];
// The promise of each test a file starts, so the next file waits for them.
t.test = (...args) => {
  const done = test(...args);
  started.push(done);
  return done;
};
// A file's clean-ups on the root (a gateway started at its top level) run when its tests are done,
// as they would at its own process's end. Left to tap, the first one would also make the root end
// as soon as it is idle, before the next file is imported.
let teardowns = [];
t.teardown = (fn) => void teardowns.push(fn);

// tap ends its root test when the process would exit (beforeExit), and a dynamic import waits on
// the loader's thread without holding the event loop: held open until the last file is done.
const hold = setInterval(() => undefined, 1 << 30);
// Named in the environment, not argv: tap names a test's fixture directory after argv.
for (const file of (process.env.FPG_UNIT_FILES ?? '').split('\n').filter(Boolean)) {
  const t0 = Date.now();
  t.jobs = 1;
  started = [];
  try {
    await import(pathToFileURL(file).href);
  } catch (error) {
    test(`${file} loads`, (tt) => {
      tt.error(error);
      tt.end();
    });
  }
  await Promise.allSettled(started);
  for (const fn of teardowns)
    await Promise.resolve()
      .then(fn)
      .catch((error) => test(`${file}: its clean-up`, async (tt) => tt.error(error)));
  teardowns = [];
  t.comment(`fpg-file ${file} ${Date.now() - t0}`);
}
clearInterval(hold);
