import pino, { type Logger } from 'pino';

/**
 * JSON logs on stdout. Asynchronous, so a slow log sink never stalls the event loop; keys are
 * redacted wherever they could appear as fields (URLs are redacted where they are logged).
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'fuel-gateway' },
      redact: { paths: ['api_key', '*.api_key', 'headers["x-api-key"]', '*.headers["x-api-key"]', 'headers.authorization', '*.headers.authorization'], censor: '[REDACTED]' },
    },
    destination ?? pino.destination({ sync: false }),
  );
}
