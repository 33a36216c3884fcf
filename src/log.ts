import { write, writeSync } from 'node:fs';
import pino, { type Logger } from 'pino';

// Lines collect up to this many bytes before one write; a quiet process still writes within FLUSH_MS.
const BUFFER_BYTES = 16384;
const FLUSH_MS = 1000;
// One write takes at most this much of what is waiting.
const MAX_WRITE = 4 * BUFFER_BYTES;
// A full pipe (EAGAIN) is tried again after this.
const RETRY_MS = 100;
// How long flushSync waits on a full pipe before it drops the rest: an exit must not wait on a reader.
const FLUSH_SYNC_MS = 1000;
const STDOUT = 1;

export interface Logging {
  log: Logger;
  /** Starts writing what is buffered now (lines worth seeing at once: start-up). */
  flush(): void;
  /**
   * Writes out every buffered line before returning, on shutdown and before a fatal exit. Lines
   * it cannot write (stdout's reader gone, or a pipe full for FLUSH_SYNC_MS) are dropped and
   * counted: it returns at once when the reader is gone.
   */
  flushSync(): void;
  /** Lines dropped since start: output could not keep up (`log.max_buffer_bytes`), or nothing reads it. */
  droppedLines(): number;
}

/**
 * Asynchronous writes to a file descriptor, one at a time, holding at most `maxBytes` waiting
 * (beyond it data goes to `drop`). A write error other than EAGAIN means the reader is gone
 * (EPIPE: a crashed log shipper, a closed terminal, a restarted supervisor): from then on
 * everything goes to `drop`. sonic-boom, used before, retried any error in its flushSync every
 * 100 ms for ever, so SIGTERM with a dead stdout never ended.
 */
class Output {
  /** Nothing can be written any more. */
  gone = false;
  private queue: Buffer[] = [];
  /** Bytes queued or being written. */
  private held = 0;
  private writing = false;

  constructor(
    private readonly fd: number,
    private readonly maxBytes: number,
    private readonly drop: (data: Buffer) => void,
  ) {}

  write(data: Buffer): void {
    if (this.gone || this.held + data.length > this.maxBytes) return this.drop(data);
    this.queue.push(data);
    this.held += data.length;
    if (!this.writing) this.next();
  }

  /**
   * Writes what is queued, synchronously. A write still in flight finishes on its own, maybe
   * after these (as with sonic-boom): only at exit, where order matters less than getting out.
   */
  flushSync(): void {
    const end = Date.now() + FLUSH_SYNC_MS;
    for (let chunk = this.take(); chunk !== null; chunk = this.take()) {
      while (chunk.length > 0) {
        try {
          const n = writeSync(this.fd, chunk);
          this.held -= n;
          chunk = chunk.subarray(n);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() >= end) return this.die(chunk);
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
        }
      }
    }
  }

  private next(): void {
    const chunk = this.take();
    this.writing = chunk !== null;
    if (chunk) this.send(chunk);
  }

  /** What is queued, joined up to MAX_WRITE (one buffer at least); null when nothing is. */
  private take(): Buffer | null {
    let n = 0;
    let bytes = 0;
    for (const b of this.queue) {
      if (n > 0 && bytes + b.length > MAX_WRITE) break;
      bytes += b.length;
      n++;
    }
    if (n === 0) return null;
    const parts = this.queue.splice(0, n);
    return n === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, bytes);
  }

  private send(chunk: Buffer): void {
    write(this.fd, chunk, (err, n) => {
      if (this.gone) return this.drop(chunk.subarray(err ? 0 : n));
      if (err?.code === 'EAGAIN') return void setTimeout(() => this.send(chunk), RETRY_MS).unref();
      if (err) return this.die(chunk);
      this.held -= n;
      if (n < chunk.length) this.send(chunk.subarray(n));
      else this.next();
    });
  }

  private die(unwritten: Buffer): void {
    this.gone = true;
    for (const b of [unwritten, ...this.queue.splice(0)]) this.drop(b);
  }
}

/**
 * JSON logs on stdout through one asynchronous, buffered writer (Output), so neither a slow log
 * sink nor a write per line stalls the event loop. Keys are redacted wherever they could appear
 * as fields (URLs are redacted where they are logged), and anything shaped like a key is
 * scrubbed from every line (scrubKeys).
 *
 * Lines are joined here, as text, and written as one Buffer per BUFFER_BYTES: a Buffer made per
 * line cost the access log 0.4 µs a line (perf, `npm run bench`).
 *
 * While stdout takes nothing (a stalled log shipper, a pipe nobody reads), output waits in memory
 * up to `maxBufferBytes`; beyond that it is dropped, since holding it all grew a loaded gateway by
 * 6 MiB a second until it ran out of memory. Once output flows again, one warning says how many
 * lines were lost. Once stdout's reader is gone, every line is dropped and counted.
 */
export function createLogging(settings: { level: string; max_buffer_bytes: number }): Logging {
  let pending = '';
  let dropped = 0;
  let reported = 0;
  let droppedSinceTick = false;
  const output = new Output(STDOUT, settings.max_buffer_bytes, (data) => {
    dropped += countLines(data);
    droppedSinceTick = true;
  });
  const push = (): void => {
    if (pending === '') return;
    output.write(Buffer.from(pending));
    pending = '';
  };
  const log = createLogger(settings.level, {
    write: (line: string) => {
      pending += line;
      if (pending.length >= BUFFER_BYTES) push();
    },
  });
  setInterval(() => {
    // A second without drops: output flows again, so the warning can get through (never once the reader is gone).
    if (dropped > reported && !droppedSinceTick && !output.gone) {
      log.warn({ dropped_lines: dropped - reported }, 'log output could not keep up: lines were dropped');
      reported = dropped;
    }
    droppedSinceTick = false;
    push();
  }, FLUSH_MS).unref();
  return {
    log,
    flush: push,
    flushSync: () => {
      push();
      output.flushSync();
    },
    droppedLines: () => dropped,
  };
}

function countLines(data: Buffer): number {
  let n = 0;
  for (let at = data.indexOf(10); at !== -1; at = data.indexOf(10, at + 1)) n++;
  return n;
}

const BASE = { service: 'fuel-gateway', pid: process.pid };

// Anything shaped like an API key (`fpg_` and what follows), percent-encoded or not, in any case.
const KEY_SHAPE = /(?:f|%66)(?:p|%70)(?:g|%67)(?:_|%5f)(?:[a-z0-9_-]|%[0-9a-f]{2})+/gi;
const KEY_HINT = /fpg|%/i;
// What is left of a key without its prefix, encoded twice or broken by an invalid escape: a run of
// 24 or more base64url characters and percent signs (a key's body is 38; an account id is 21).
const LONG_RUN = /[A-Za-z0-9_%-]{24,}/g;

/**
 * Every logged string with key-shaped text replaced: keys sent in the wrong place (`?key=`, a
 * path segment, userinfo, a header echoed in an error) are logged as `fpg_[REDACTED]`, and any
 * other run long enough to hold most of a key as `[REDACTED]`. The cheap test first keeps lines
 * without a hint of the prefix (nearly all) from the prefix scan.
 */
export const scrubKeys = (line: string): string =>
  (KEY_HINT.test(line) ? line.replace(KEY_SHAPE, 'fpg_[REDACTED]') : line).replace(LONG_RUN, '[REDACTED]');

/** The logger's stream, and the one under it for writers that scrub their own text (the access log). */
interface ScrubbedStream extends pino.DestinationStream {
  raw?: pino.DestinationStream;
}

/** A pino logger writing to `destination`, with keys redacted from known fields and scrubbed from every line. */
export function createLogger(level: string, destination: pino.DestinationStream): Logger {
  const scrubbed: ScrubbedStream = { write: (line: string) => destination.write(scrubKeys(line)), raw: destination };
  return pino(
    {
      level,
      base: BASE,
      redact: {
        paths: [
          'api_key',
          '*.api_key',
          'headers["x-api-key"]',
          '*.headers["x-api-key"]',
          // FuelSA's clients send the key in `key` (features/compat-fuelsa).
          'headers.key',
          '*.headers.key',
          'headers.authorization',
          '*.headers.authorization',
          // Webhook secrets: never logged, wherever an endpoint might end up in a line.
          'secret',
          '*.secret',
          'previous_secret',
          '*.previous_secret',
          'headers["webhook-signature"]',
          '*.headers["webhook-signature"]',
        ],
        censor: '[REDACTED]',
      },
    },
    scrubbed,
  );
}

/**
 * The access log: one line per answer, in the shape pino writes (level, time, base fields, msg),
 * straight to the logger's destination. pino's own serialisation of these fields costs about
 * 0.7 µs a line more (3.5 µs with the redaction the app log needs). No field can hold a key: the
 * URL is redacted before it comes here (`accessUrl`), and the rest are a method token, numbers,
 * an account id and an IP address. URL and account id arrive JSON-encoded, so that callers can
 * encode them once (per route, per cached account) rather than per line.
 */
export class AccessLog {
  private readonly stream: pino.DestinationStream;
  private readonly base = `,${JSON.stringify(BASE).slice(1, -1)},"method":"`;

  constructor(log: Logger) {
    const stream = Reflect.get(log, pino.symbols.streamSym) as ScrubbedStream;
    this.stream = stream.raw ?? stream;
  }

  /** `accountJson` is undefined before the key is known to belong to one. */
  write(
    method: string,
    urlJson: string,
    status: number,
    ms: number,
    accountJson: string | undefined,
    client: string,
  ): void {
    this.stream.write(
      `{"level":30,"time":${Date.now()}${this.base}${method}","url":${urlJson},"status":${status},"ms":${ms}` +
        `${accountJson === undefined ? '' : `,"account":${accountJson}`},"client":"${client}","msg":"request"}\n`,
    );
  }
}

/**
 * A redacted URL as the access log writes it: JSON-encoded, and scrubbed, since only the URL can
 * carry a key in the wrong place (scanning the whole line would cost 3 times more).
 */
export const accessUrl = (redacted: string): string => JSON.stringify(scrubKeys(redacted));

/** An uncaught exception or rejection is logged and the buffer flushed before the process exits 1. */
export function exitOnFatal(logging: Logging): void {
  const fatal = (err: unknown, kind: string): void => {
    logging.log.fatal({ err }, `${kind}: exiting`);
    logging.flushSync();
    process.exit(1);
  };
  process.on('uncaughtException', (err) => fatal(err, 'uncaught exception'));
  process.on('unhandledRejection', (err) => fatal(err, 'unhandled rejection'));
}
