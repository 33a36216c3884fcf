import type { Logger } from 'pino';
import { LineBuffer } from './line-buffer.js';
import { BASE, createLogger } from './logger.js';
import { Output } from './output.js';

// Lines collect up to this many bytes before one write; a quiet process still writes within
// FLUSH_MS, which bounds what a `kill -9` loses of a log that keeps up (docs/operations.md).
const BUFFER_BYTES = 64 * 1024;
export const FLUSH_MS = 100;
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
 * Lines are gathered here as bytes (LineBuffer: pino's lines encoded as they come, the access
 * log's written straight in) and written as one Buffer per BUFFER_BYTES: a Buffer made per line,
 * and later a string joined per line, were measurable parts of the access log's cost
 * (docs/performance.md).
 *
 * While stdout takes nothing (a stalled log shipper, a pipe nobody reads), output waits in memory
 * up to `maxBufferBytes`; beyond that it is dropped, since holding it all grew a loaded gateway
 * steadily until it ran out of memory (docs/performance.md). Once a write gets through after drops,
 * a warning says how many lines were lost; those lines count as reported only once the warning
 * itself is written, so a warning dropped in its turn is folded into the next one, and the warnings
 * add up to the metric. Once stdout's reader is gone, every line is dropped and counted.
 */
export function createLogging(settings: { level: string; max_buffer_bytes: number }): Logging {
  let dropped = 0;
  let reported = 0;
  let warning = false;
  const warnIfDropped = (): void => {
    if (warning || dropped === reported || output.gone) return;
    const lost = dropped - reported;
    if (!log.isLevelEnabled('warn')) {
      reported = dropped;
      return;
    }
    warning = true;
    output.write(Buffer.from(dropWarning(lost)), (ok) => {
      warning = false;
      if (ok) reported += lost;
    });
  };
  const output = new Output(STDOUT, settings.max_buffer_bytes, {
    drop: (data) => {
      dropped += countLines(data);
    },
    flowed: warnIfDropped,
  });
  const lines = new LineBuffer(BUFFER_BYTES, (data) => output.write(data));
  const push = (): void => lines.flush();
  const log = createLogger(settings.level, {
    write: (line: string) => {
      if (lines.room(3 * line.length)) lines.text(line);
      else lines.passOn(Buffer.from(line));
    },
    lines,
  });
  setInterval(push, FLUSH_MS).unref();
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

const WARNING_HEAD = `{"level":40,"time":`;
const WARNING_BASE = `,${JSON.stringify(BASE).slice(1, -1)},"dropped_lines":`;

/** The warning as pino would write it; made here, so that the writer hears when this line got out. */
const dropWarning = (lost: number): string =>
  `${WARNING_HEAD}${Date.now()}${WARNING_BASE}${lost},"msg":"log output could not keep up: lines were dropped"}\n`;

function countLines(data: Buffer): number {
  let n = 0;
  for (let at = data.indexOf(10); at !== -1; at = data.indexOf(10, at + 1)) n++;
  return n;
}
