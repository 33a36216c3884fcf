// `npm test`'s tap run: every test file, with the unit files (test/unit/files.txt) in eight
// processes (test/unit/shards.mjs) instead of one each. Given files (`npm test -- FILE`), tap runs
// those, each alone, as `npx tap FILE` does.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { balance, SHARDS, unitFiles } from './unit/files.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const units = unitFiles();
const own = readdirSync(new URL('.', import.meta.url), { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => `test/${f}`)
  .filter((f) => !units.includes(f))
  .sort();
const shards = Array.from({ length: SHARDS }, (_, i) => `test/unit/shard-${i + 1}.mjs`);
const tap = fileURLToPath(new URL('../node_modules/.bin/tap', import.meta.url));
const given = process.argv.slice(2);
const { status, signal } = spawnSync(tap, given.length > 0 ? given : [...shards, ...own], {
  cwd: root,
  stdio: 'inherit',
  // Shared out once here, for all eight shards alike.
  env: { ...process.env, FPG_UNIT_SHARDS: JSON.stringify(balance(units, SHARDS).map((b) => b.files)) },
});
process.exitCode = status ?? (signal ? 1 : 0);
