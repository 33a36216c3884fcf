import pino, { type Logger } from 'pino';
import type { LineBuffer } from './line-buffer.js';
import { scrubKeys } from './scrub.js';

export const BASE = { service: 'fuel-gateway', pid: process.pid };

/** Where a logger writes: a stream, and the byte buffer behind it when it has one (`createLogging`'s). */
export interface LogDestination extends pino.DestinationStream {
  lines?: LineBuffer;
}

/** The logger's stream, and the one under it for writers that scrub their own text (the access log). */
export interface ScrubbedStream extends LogDestination {
  raw?: pino.DestinationStream;
}

/** A pino logger writing to `destination`, with keys redacted from known fields and scrubbed from every line. */
export function createLogger(level: string, destination: LogDestination): Logger {
  const scrubbed: ScrubbedStream = { write: (line: string) => destination.write(scrubKeys(line)), raw: destination };
  if (destination.lines !== undefined) scrubbed.lines = destination.lines;
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
