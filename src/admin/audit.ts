import type { Logger } from 'pino';

export type AuditAction =
  | 'account.create'
  | 'account.update'
  | 'account.rotate_key'
  | 'account.delete'
  | 'key.create'
  | 'key.update'
  | 'key.rotate'
  | 'key.revoke'
  | 'account.grant'
  | 'prices.publish'
  | 'prices.cancel'
  | 'cache.purge'
  | 'webhook.create'
  | 'webhook.delete'
  | 'webhook.rotate_secret'
  | 'webhook.test'
  | 'webhook.replay'
  | 'billing.retry'
  | 'key.leak'
  | 'member.add'
  | 'member.remove'
  | 'signup.approve'
  | 'signup.reject';

/**
 * One admin change: what, to which account or price date, from where (the admin request's
 * remote address, or "cli"). Never a key, a key hash or a webhook secret: the line is for people to read.
 */
export interface AuditEntry {
  action: AuditAction;
  from: string;
  account_id?: string;
  key_id?: string;
  /** A rotation: the key it replaced (`key_id` is the new one), and how long the old one goes on working. */
  previous_key_id?: string;
  grace_s?: number;
  /** A leak report: where the key was found, and what kind of place. */
  url?: string;
  source?: string;
  webhook_id?: string;
  /** A replay: the event delivered again. */
  event_id?: string;
  effective_date?: string;
  /** A history document published at once. */
  effective_dates?: string[];
  /** A cache purge of one path (absent: all of it). */
  path?: string;
  /** For an update: the fields as they were and as they are now. */
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
}

export type Audit = (entry: AuditEntry) => void;

/**
 * Audit lines go to the log at info even when `log.level` asks for less (warn, error): they are
 * rare and the record of who changed what. Only `silent` silences them.
 */
export function auditLog(log: Logger): Audit {
  const out = log.level === 'silent' ? log : log.child({ component: 'audit' }, { level: 'info' });
  return (entry) => out.info({ audit: entry }, `admin ${entry.action}`);
}
