// tap's `before` program (package.json): `npm run build` once per run, so the children the
// tests start (test/helpers/cli.ts) run the current sources from JavaScript. Starting a child
// through tap's TypeScript loader costs it ~2 s of compiling; from dist/, 0.3 s. Coverage still
// lands on src/: the children record it and their source maps lead back to the .ts files.
import { execFileSync } from 'node:child_process';
import { ROOT } from './cli.js';

execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
