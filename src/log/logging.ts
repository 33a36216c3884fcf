import type { Logger } from 'pino';
import { createLogger } from './logger.js';
import { Output } from './output.js';

// Lines collect up to this many bytes before one write; a quiet process still writes within FLUSH_MS.
const BUFFER_BYTES = 16384;
const FLUSH_MS = 1000;
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
