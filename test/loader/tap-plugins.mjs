// `npm test` runs this before tap. tap rebuilds its Test class when the configured plugins
// (package.json `tap.plugin`) differ from those it was built with, but its runner has by then
// loaded the old build, and starts every test file of that run with the old plugins' loaders:
// on a fresh install (every CI run) that is @tapjs/typescript's ts-node and @tapjs/mock, about
// 0.45 s of CPU per test file for nothing. Building first makes the first run like the others.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TapConfig } from '@tapjs/config';
import { signature } from '@tapjs/test';

const config = await TapConfig.load();
if (config.pluginSignature !== signature) {
  const tap = fileURLToPath(new URL('../../node_modules/.bin/tap', import.meta.url));
  execFileSync(tap, ['build'], { stdio: 'inherit' });
}
