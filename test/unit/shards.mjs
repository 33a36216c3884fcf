// `npm test` runs the unit files (files.txt) in eight processes, shard-1.mjs … shard-8.mjs, not one
// each: with tap's coverage a process cost a file about 1.5 s of CPU before its first test.
// test/tap.mjs shares them out once, by their last times, for all eight (FPG_UNIT_SHARDS); a
// shard run by itself shares them by name.
import { runFiles } from './batch.mjs';
import { balance, SHARDS, unitFiles } from './files.mjs';

export async function runShard(k) {
  const shares = process.env.FPG_UNIT_SHARDS
    ? JSON.parse(process.env.FPG_UNIT_SHARDS)
    : balance(unitFiles(), SHARDS, {}).map((b) => b.files);
  await runFiles(shares[k - 1] ?? []);
}
