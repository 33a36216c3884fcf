import type { Answer } from './post.js';

/** What became of one send: taken, to be sent again (after at least `afterMs`), or refused for good. */
export type Outcome =
  | { kind: 'taken' }
  | { kind: 'again'; afterMs: number | null; error: string }
  | { kind: 'refused'; error: string };

// The longest a Retry-After is taken at its word: an hour, the default interval.
const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * The one rule for every receiver: 2xx taken; 429, 5xx and no answer sent again, after the
 * receiver's Retry-After when it gives one; any other status refused (a request it will never
 * take as it is: sending it again would only repeat the refusal), and so is a receiver whose
 * address the gateway refuses.
 */
export function outcomeOf(answer: Answer, now: number): Outcome {
  if (answer.kind === 'refused') return { kind: 'refused', error: answer.error };
  if (answer.kind === 'none') return { kind: 'again', afterMs: null, error: answer.error };
  const { status } = answer;
  if (status >= 200 && status < 300) return { kind: 'taken' };
  const error = `status ${status}${summary(answer.body)}`;
  if (status === 429 || status >= 500) return { kind: 'again', afterMs: retryAfterMs(answer.retryAfter, now), error };
  return { kind: 'refused', error };
}

/** Retry-After in seconds or as an HTTP date; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | null {
  if (value === null) return null;
  const ms = /^\d+$/.test(value.trim()) ? Number(value.trim()) * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : null;
}

/** The first words of an error body, for the failure list (never a header, which may hold the key). */
function summary(body: string): string {
  const text = body.replace(/\s+/g, ' ').trim().slice(0, 200);
  return text === '' ? '' : `: ${text}`;
}
