import type { Answer } from './post.js';
import { redacted } from './redact.js';

/** What became of one send: taken, to be sent again (after at least `afterMs`), or refused for good. */
export type Outcome =
  | { kind: 'taken' }
  | { kind: 'again'; afterMs: number | null; error: string }
  | { kind: 'refused'; error: string };

// The longest a Retry-After is taken at its word: an hour, the default interval.
const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * The one rule for every receiver: 2xx taken; 429, 5xx, a redirect and no answer sent again,
 * after the receiver's Retry-After when it gives one; any other status refused (a request it will
 * never take as it is: sending it again would only repeat the refusal), and so is a receiver whose
 * address the gateway refuses. A redirect is not followed: the request carries the secret, and a
 * receiver that moved is the operator's to re-point (the error names where it points), so the
 * event waits, with its backoff, and is not lost. The error is kept and logged: `secrets` are cut
 * out of it (redact.ts).
 */
export function outcomeOf(answer: Answer, now: number, secrets: readonly string[]): Outcome {
  if (answer.kind === 'refused') return { kind: 'refused', error: redacted(answer.error, secrets) };
  if (answer.kind === 'none') return { kind: 'again', afterMs: null, error: redacted(answer.error, secrets) };
  const { status } = answer;
  if (status >= 200 && status < 300) return { kind: 'taken' };
  const moved = status >= 300 && status < 400;
  const said = redacted(
    moved && answer.location !== null ? `to ${answer.location} ${answer.body}` : answer.body,
    secrets,
  );
  const error = `status ${status}${said === '' ? '' : `: ${said}`}`;
  if (status === 429 || status >= 500 || moved)
    return { kind: 'again', afterMs: retryAfterMs(answer.retryAfter, now), error };
  return { kind: 'refused', error };
}

/** Retry-After in seconds or as an HTTP date; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | null {
  if (value === null) return null;
  const ms = /^\d+$/.test(value.trim()) ? Number(value.trim()) * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : null;
}
