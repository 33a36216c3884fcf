// The unit files' share 1 of 8 in `npm test` (see shards.mjs).
import { runShard } from './shards.mjs';

await runShard(1);
