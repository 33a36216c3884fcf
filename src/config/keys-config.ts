/** The `keys` section of the config, and the `messages` every error answer takes its text from. */
import { z } from 'zod';
import { message, posInt } from './fields.js';

export const keys = z.strictObject({
  expiry_warning_days: posInt.describe(
    'While a key expires within this many days, every answer to it carries X-API-Key-Expires',
  ),
});

export const messages = z.strictObject({
  missing_key: message,
  invalid_key: message,
  expired_key: message,
  inactive_key: message,
  key_scope: message,
  key_address: message,
  limit_monthly: message,
  limit_trial: message,
  burst: message,
  throttled: message,
  invalid_month: message,
  invalid_year: message,
  bad_request: message,
  request_timeout: message,
  headers_too_large: message,
  invalid_range: message,
  invalid_format: message,
  invalid_region: message,
  historical_disabled: message,
  not_found: message,
  method_not_allowed: message,
  unavailable: message,
  upstream_unavailable: message,
  upstream_timeout: message,
  internal: message,
});
