import type { Logging } from './logging.js';

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
