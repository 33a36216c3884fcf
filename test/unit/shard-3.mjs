// The unit files' share 3 of 8 in `npm test` (see shards.mjs).
import { runShard } from './shards.mjs';

await runShard(3);
