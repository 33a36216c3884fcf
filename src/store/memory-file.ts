import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { GatewayError } from '../errors.js';
import { describeIssues, priceSetDocument } from '../prices/schema.js';

/** What the embedded store keeps on disk between runs. */
const stateSchema = z.strictObject({
  version: z.literal(1),
  accounts: z.array(
    z.strictObject({
      id: z.string().min(1),
      status: z.enum(['active', 'inactive']),
      plan: z.string().min(1),
      limit: z.number().int().positive().nullable(),
      anchor: z.string(),
      label: z.string(),
      created_at: z.string(),
      revision: z.number().int().positive(),
      key_hash: z.string().regex(/^[0-9a-f]{64}$/),
    }),
  ),
  prices: z.array(priceSetDocument.extend({ updated_at: z.string(), origin: z.literal('upstream').optional() })),
  counters: z.array(
    z.strictObject({
      account: z.string(),
      period: z.string(),
      used: z.number().int().nonnegative(),
      expire_at_ms: z.number(),
    }),
  ),
});

export type MemoryState = z.infer<typeof stateSchema>;

/**
 * The state file of a previous run, or null when there is none yet. A file that cannot be read
 * or parsed stops the start (left as it is, for the operator to look at): starting empty would
 * silently lose every account.
 */
export function readState(file: string): MemoryState | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new GatewayError(
      'STORE_UNREADABLE',
      `${file}: cannot read the memory store's file: ${(err as Error).message}`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new GatewayError(
      'STORE_UNREADABLE',
      `${file}: not the memory store's file (${(err as Error).message}); it was left untouched: restore it, or move it away to start empty`,
    );
  }
  const parsed = stateSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = describeIssues(parsed.error, `${file}: `);
    throw new GatewayError(
      'STORE_UNREADABLE',
      `${lines.slice(0, 5).join('\n')}\nthe file was left untouched: restore it, or move it away to start empty`,
      lines,
    );
  }
  return parsed.data;
}

/**
 * The start of the state file's text, up to the counters: accounts and prices change rarely,
 * counters with every request, so the flush of counters reuses this (with 10,000 accounts,
 * encoding them held the event loop for about 15 ms a second).
 */
export function encodeFixed(accounts: MemoryState['accounts'], prices: MemoryState['prices']): Buffer {
  return Buffer.from(
    `{"version":1,"accounts":${JSON.stringify(accounts)},"prices":${JSON.stringify(prices)},"counters":`,
  );
}

/**
 * Replaces the file atomically: a temporary file is written and flushed to disk, then renamed
 * over it, so a crash leaves either the old state or the new one, never half of either.
 */
export function writeState(file: string, fixed: Buffer, counters: MemoryState['counters']): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeSync(fd, fixed);
    writeSync(fd, `${JSON.stringify(counters)}}`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
  // The rename itself is durable once the directory is flushed.
  const dir = openSync(dirname(file), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
