/**
 * The `keys` and `secret_scanning` sections of the config (key lifecycle and leak reports), and
 * the `messages` every error answer takes its text from.
 */
import { createPublicKey } from 'node:crypto';
import { z } from 'zod';
import { message, posInt } from './fields.js';

export const keys = z.strictObject({
  // At most the 30 days the outbox remembers an event id: that is what makes key.expiring once.
  expiry_warning_days: posInt
    .max(30, 'expected at most 30')
    .describe(
      'While a key expires within this many days, every answer to it carries X-API-Key-Expires; a key.expiring webhook event is raised once when it enters this window',
    ),
});

/** True for a PEM public key on P-256, the curve GitHub signs its reports with. */
function isP256Pem(pem: string): boolean {
  try {
    const key = createPublicKey(pem);
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
  } catch {
    return false;
  }
}

const publicKey = z.strictObject({
  key_identifier: z
    .string()
    .min(1)
    .max(200)
    .describe("The key's identifier, as the report's Github-Public-Key-Identifier names it"),
  key: z.string().refine(isP256Pem, 'expected a PEM public key on the P-256 curve (-----BEGIN PUBLIC KEY-----)'),
  // GitHub's published list marks its current key; every listed key verifies, so it is kept only
  // to let an operator paste the list as it is.
  is_current: z.boolean().optional(),
});

export const secretScanning = z.strictObject({
  public_keys: z
    .array(publicKey)
    .describe(
      "GitHub's secret-scanning public keys ({key_identifier, key} PEMs, from api.github.com/meta/public_keys/secret_scanning); empty: POST /fuel-api/secret-scanning answers 404",
    ),
  action: z
    .enum(['revoke', 'notify'])
    .describe(
      'What a signed report of a live key does: revoke it at once, or only tell (audit line, key.leaked event)',
    ),
});

export const messages = z.strictObject({
  missing_key: message,
  invalid_key: message,
  expired_key: message,
  inactive_key: message,
  /** billing.stripe.unpaid_message, unless set here. */
  account_unpaid: message.optional(),
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
  invalid_signature: message,
  report_too_large: message,
  too_many_tokens: message,
  invalid_report: message,
  not_signed_in: message,
  forbidden: message,
  invalid_link: message,
  invalid_passkey: message,
  stripe_signature: message,
  stripe_event_too_large: message,
});
