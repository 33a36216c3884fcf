import pino, { type Logger } from 'pino';

// Lines collect up to this many bytes before one write; a quiet process still writes within FLUSH_MS.
const BUFFER_BYTES = 4096;
const FLUSH_MS = 1000;

export interface Logging {
  log: Logger;
  /** Starts writing what is buffered now (lines worth seeing at once: start-up). */
  flush(): void;
  /** Writes out every buffered line before returning: on shutdown and before a fatal exit. */
  flushSync(): void;
}

/**
 * JSON logs on stdout through one asynchronous, buffered pino destination, so neither a slow log
 * sink nor a write per line stalls the event loop. Keys are redacted wherever they could appear
 * as fields (URLs are redacted where they are logged).
 */
export function createLogging(level: string): Logging {
  const destination = pino.destination({ sync: false, minLength: BUFFER_BYTES });
  let open = true;
  destination.on('close', () => (open = false));
  setInterval(() => open && destination.flush(), FLUSH_MS).unref();
  return {
    log: createLogger(level, destination),
    flush: () => {
      if (open) destination.flush();
    },
    flushSync: () => {
      if (open) destination.flushSync();
    },
  };
}

export function createLogger(level: string, destination: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'fuel-gateway', pid: process.pid },
      redact: { paths: ['api_key', '*.api_key', 'headers["x-api-key"]', '*.headers["x-api-key"]', 'headers.authorization', '*.headers.authorization'], censor: '[REDACTED]' },
    },
    destination,
  );
}

/**
 * The access log: a child without redaction, which costs about 3.5 µs a line. Its lines are
 * built from fields that never hold a key (the URL is redacted before it is logged).
 */
export const accessLogger = (log: Logger): Logger => log.child({}, { redact: [] });

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
