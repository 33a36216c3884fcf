import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new endpoint secret: 24 random bytes, base64, with Standard Webhooks' `whsec_` prefix. */
export function newSecret(): string {
  return PREFIX + randomBytes(24).toString('base64');
}

/**
 * The `webhook-signature` header of Standard Webhooks v1: `v1,<base64 HMAC-SHA256>` over
 * `id.timestamp.body`, keyed with the base64-decoded part of the secret after `whsec_`. With
 * several secrets (a rotation's grace period) one signature per secret, space-separated, so a
 * receiver holding either verifies.
 */
export function signatureHeader(secrets: readonly string[], id: string, timestampS: number, body: string): string {
  const content = `${id}.${timestampS}.${body}`;
  return secrets
    .map(
      (s) =>
        `v1,${createHmac('sha256', Buffer.from(s.slice(PREFIX.length), 'base64'))
          .update(content)
          .digest('base64')}`,
    )
    .join(' ');
}
