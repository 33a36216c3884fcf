// tap's `before` program (package.json): dist/ built once per run, so the children the tests
// start (test/helpers/cli.ts) run the current sources from JavaScript. Starting a child through
// tap's TypeScript loader costs it ~2 s of compiling; from dist/, 0.3 s. Coverage still lands on
// src/: the children record it and their source maps lead back to the .ts files.
// `npm run build` transpiles only (the type check is `npm test`'s typecheck step), and is
// skipped when dist/ was built after the last change to src/ and the build's settings.
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';

const mtime = (path: string): number => statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Number.POSITIVE_INFINITY;

/** The newest change among the build's inputs: every file under src/, tsconfig.json and package.json. */
function newestInput(): number {
  const files = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).map((f) => join(ROOT, 'src', f));
  return Math.max(...[...files, join(ROOT, 'tsconfig.json'), join(ROOT, 'package.json')].map(mtime));
}

const STAMP = join(ROOT, 'dist/.tsbuildinfo');
if (mtime(STAMP) <= newestInput() || !Number.isFinite(mtime(STAMP))) {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  // tsc leaves its build info as it was when nothing changed: the time of this check is the stamp.
  const now = new Date();
  utimesSync(STAMP, now, now);
}
