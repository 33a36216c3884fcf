import { eventId, type OutboxEvent, outboxEvent } from './event.js';

/** A key as its events name it: never the key, nor its hash; the hint is what the admin API shows. */
export interface KeyRef {
  account_id: string;
  key_id: string;
  key_name: string;
}

/** `secret_scanning.action`. */
export type LeakAction = 'revoke' | 'notify';

/** Where a secret scanner found the key (GitHub's report: the public URL and the kind of place). */
export interface LeakSite {
  url: string;
  source: string;
}

// Each id is built from what makes the happening unique, so however many gateways (or retries of
// the same admin call) offer it, the outbox keeps it once.

export function keyCreatedEvent(
  key: KeyRef,
  extra: { hint: string | null; expires_at: string | null },
  nowMs: number,
): OutboxEvent {
  const data = { ...key, hint: extra.hint, expires_at: extra.expires_at };
  return outboxEvent(eventId('key.created', key.key_id), 'key.created', data, nowMs, key.account_id);
}

/** A key is revoked once: its id never comes back. */
export function keyRevokedEvent(key: KeyRef, nowMs: number): OutboxEvent {
  return outboxEvent(eventId('key.revoked', key.key_id), 'key.revoked', key, nowMs, key.account_id);
}

/** The new key and the one it replaces, which keeps working until `previous_expires_at` (now + grace). */
export function keyRotatedEvent(
  key: KeyRef,
  previous: { key_id: string; expires_at: string },
  graceS: number,
  nowMs: number,
): OutboxEvent {
  const data = { ...key, previous_key_id: previous.key_id, previous_expires_at: previous.expires_at, grace_s: graceS };
  return outboxEvent(eventId('key.rotated', previous.key_id, key.key_id), 'key.rotated', data, nowMs, key.account_id);
}

/**
 * Once per key and expiry: an expiry moved (PATCH) is news again, the same expiry seen by every
 * gateway's check is not.
 */
export function keyExpiringEvent(key: KeyRef, expiresAt: string, nowMs: number): OutboxEvent {
  const data = { ...key, expires_at: expiresAt };
  return outboxEvent(eventId('key.expiring', key.key_id, expiresAt), 'key.expiring', data, nowMs, key.account_id);
}

/** Once per key and place found: a report sent again (GitHub retries) tells nothing new. */
export function keyLeakedEvent(key: KeyRef, site: LeakSite, action: LeakAction, nowMs: number): OutboxEvent {
  const data = { ...key, url: site.url, source: site.source, action };
  return outboxEvent(
    eventId('key.leaked', key.key_id, site.url, site.source),
    'key.leaked',
    data,
    nowMs,
    key.account_id,
  );
}
