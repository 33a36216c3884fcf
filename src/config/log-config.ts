/** The `log` section of the config. */
import { z } from 'zod';

export const log = z.strictObject({
  level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).describe('Log level (env LOG_LEVEL)'),
  access: z.boolean().describe('One line per public request (account id, client address, redacted URL, status, time)'),
  max_buffer_bytes: z
    .number()
    .int()
    .min(65536)
    .describe('Log output held while stdout cannot take it; beyond it lines are dropped and counted'),
});
