// The unit files (files.txt) and how they are shared among processes, for `npm run test:unit`
// (run.mjs) and `npm test` (the shards tap runs, shard-*.mjs).
import { readFileSync } from 'node:fs';

const TIMES = new URL('../../node_modules/.cache/fpg-unit-times.json', import.meta.url);

export { TIMES };

export const unitFiles = () =>
  readFileSync(new URL('./files.txt', import.meta.url), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));

/** Each file's last time in ms (run.mjs writes them), `{}` before a first run. */
export function lastTimes() {
  try {
    return JSON.parse(readFileSync(TIMES, 'utf8'));
  } catch {
    return {};
  }
}

/**
 * `files` in `n` batches of about the same time, longest first in each, by their last times (a
 * file never timed counts 10 s): the longest file goes to the batch with the least so far.
 */
export function balance(files, n, times = lastTimes()) {
  const timeOf = (f) => times[f] ?? 10_000;
  const batches = Array.from({ length: Math.min(files.length, n) }, () => ({ files: [], ms: 0 }));
  for (const file of [...files].sort((a, b) => timeOf(b) - timeOf(a) || (a < b ? -1 : 1))) {
    const lightest = batches.reduce((a, b) => (b.ms < a.ms ? b : a));
    lightest.files.push(file);
    lightest.ms += timeOf(file);
  }
  return batches.sort((a, b) => b.ms - a.ms);
}

/** How many processes `npm test` runs the unit files in (shard-1.mjs … shard-8.mjs). */
export const SHARDS = 8;
