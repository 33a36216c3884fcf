import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { burstLimit, overage } from '../../config/plan-config.js';
import { EVENT_TYPES } from '../../events/event.js';
import { GatewayError } from '../../failures.js';
import { describeIssues, priceSetDocument } from '../../prices/price-set-schema.js';
import { storedKeySchema } from '../keys/key-record.js';
import { openTemp, openTempSync, removeStaleTemps, tempOf } from './temp-file.js';

const eventType = z.enum([...EVENT_TYPES, 'webhook.test']);
const webhooksState = z.strictObject({
  endpoints: z.array(
    z.strictObject({
      id: z.string(),
      url: z.string(),
      events: z.array(eventType),
      account_id: z.string().nullable(),
      description: z.string().nullable(),
      secret: z.string(),
      previous_secret: z.string().nullable(),
      previous_until_ms: z.number().nullable(),
      created_at: z.string(),
    }),
  ),
  deliveries: z.array(
    z.strictObject({
      id: z.string(),
      event_id: z.string(),
      endpoint_id: z.string(),
      type: eventType,
      body: z.string(),
      attempts: z.number().int(),
      state: z.enum(['pending', 'delivered', 'failed']),
      last_status: z.number().int().nullable(),
      last_error: z.string().nullable(),
      next_attempt_ms: z.number().nullable(),
      created_ms: z.number(),
      holder: z.string().nullable(),
      due_ms: z.number().nullable(),
      forget_ms: z.number().nullable(),
    }),
  ),
  seen: z.array(z.tuple([z.string(), z.number()])),
});

const billingEvent = z.strictObject({
  id: z.string(),
  exporter: z.string(),
  account_id: z.string(),
  subject: z.string(),
  from: z.number().int().nonnegative(),
  to: z.number().int().positive(),
  value: z.number().int().positive(),
  timestamp_ms: z.number(),
  attempts: z.number().int().nonnegative(),
  next_attempt_ms: z.number(),
  last_error: z.string().nullable(),
  failed_at_ms: z.number().nullable(),
});
const billingCursor = z.strictObject({
  sent: z.number().int().nonnegative(),
  seen: z.record(z.string(), z.number().int().nonnegative()),
  outbox: z.array(billingEvent),
  failed: z.array(billingEvent),
});

const storedAccount = z.strictObject({
  id: z.string().min(1),
  status: z.enum(['active', 'inactive']),
  plan: z.string().min(1),
  limit: z.number().int().positive().nullable(),
  anchor: z.string(),
  label: z.string(),
  created_at: z.string(),
  revision: z.number().int().positive(),
  /** The one key of a file written before accounts had several keys. */
  key_hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  keys: z.array(storedKeySchema).min(1).optional(),
  external_ids: z
    .strictObject({ stripe_customer: z.string().optional(), billing_subject: z.string().optional() })
    .optional(),
  burst: burstLimit.optional(),
  overage: overage.optional(),
  grants: z
    .array(
      z.strictObject({
        id: z.string(),
        requests: z.number().int().positive(),
        note: z.string().nullable(),
        period_id: z.string(),
        period_started_at: z.string(),
        created_at: z.string(),
      }),
    )
    .optional(),
});

/** What the embedded store keeps on disk between runs. */
const stateSchema = z.strictObject({
  version: z.literal(1),
  accounts: z.array(storedAccount),
  /** Deleted accounts kept while their period records are (absent in files written before). */
  deleted: z.array(z.strictObject({ account: storedAccount, untilMs: z.number() })).optional(),
  /** Numbers the changes of the prices (absent in files written before it). */
  price_seq: z.number().int().nonnegative().optional(),
  prices: z.array(priceSetDocument.extend({ updated_at: z.string(), origin: z.literal('upstream').optional() })),
  counters: z.array(
    z.strictObject({
      account: z.string(),
      period: z.string(),
      used: z.number().int().nonnegative(),
      expire_at_ms: z.number(),
      days: z.record(z.string(), z.number().int().nonnegative()).optional(),
      record: z
        .strictObject({
          plan: z.string(),
          kind: z.enum(['trial', 'monthly']),
          limit: z.number().int().nonnegative(),
          startMs: z.number(),
          endMs: z.number(),
          changes: z.array(z.strictObject({ atMs: z.number(), plan: z.string(), limit: z.number(), used: z.number() })),
          granted: z.number().int().nonnegative().optional(),
        })
        .nullable()
        .optional(),
      alerted: z.array(z.number().int()).optional(),
    }),
  ),
  webhooks: webhooksState.optional(),
  billing: z.array(z.tuple([z.string(), billingCursor])).optional(),
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
 * Writes the state file off the event loop: the text is built on the loop (from fragments the
 * store keeps encoded), the writing, flushing to disk and renaming run in libuv's thread pool.
 * One write at a time; changes made while one is in flight share the next. With many accounts a
 * synchronous write held the loop long enough to show in the tail latency, once a second under
 * load and once per account created (docs/performance.md).
 */
/** The state file's text: the start (accounts and prices), encoded once per change of those, then the rest. */
export type StateParts = readonly [Buffer, string];

export class StateWriter {
  private running: Promise<void> | null = null;
  private next: Waiters | null = null;

  /** `parts`: the file's text as its encoded start and the rest. */
  constructor(
    readonly file: string,
    private readonly parts: () => StateParts,
  ) {
    removeStaleTemps(file);
  }

  /** Resolves once a write that began after this call has reached the disk. */
  write(): Promise<void> {
    this.next ??= waiters();
    const next = this.next;
    if (this.running === null) this.start();
    return next.promise;
  }

  /**
   * Waits for the write in flight, then writes the current state synchronously when `dirty` or
   * when a write was still to come (shutdown).
   */
  async close(dirty: boolean): Promise<void> {
    await this.running?.catch(() => {});
    const next = this.next;
    this.next = null;
    if (dirty || next !== null) writeStateSync(this.file, this.parts());
    next?.resolve();
  }

  private start(): void {
    const batch = this.next as Waiters;
    this.next = null;
    this.running = writeState(this.file, this.parts())
      .then(batch.resolve, batch.reject)
      .finally(() => {
        this.running = null;
        if (this.next !== null) this.start();
      });
  }
}

interface Waiters {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function waiters(): Waiters {
  let resolve = (): void => {};
  let reject: (err: unknown) => void = () => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Replaces the file atomically: a temporary file is written and flushed to disk, then renamed
 * over it, so a crash leaves either the old state or the new one, never half of either.
 */
async function writeState(file: string, [start, rest]: StateParts): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temp = tempOf(file);
  const handle = await openTemp(temp);
  try {
    try {
      await handle.writeFile(start);
      await handle.writeFile(rest);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  // The rename itself is durable once the directory is flushed.
  const dir = await open(dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/** writeState on the event loop, for shutdown. */
function writeStateSync(file: string, [start, rest]: StateParts): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temp = tempOf(file);
  const fd = openTempSync(temp);
  try {
    try {
      writeSync(fd, start);
      writeSync(fd, rest);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
  const dir = openSync(dirname(file), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
