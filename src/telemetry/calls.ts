/**
 * The hook of outgoing deliveries (webhooks, billing): a CLIENT span per attempt when traces are
 * on (sdk.ts sets `clientCalls.start`), nothing otherwise. Only the URL's scheme, host and path
 * are recorded: a query or a header can carry a secret.
 */
import type { ClientRequest } from 'node:http';
import type { ClientCall, OriginSpan } from './tracing.js';

export const clientCalls: {
  start: ((name: string, url: string, attributes: Record<string, string | number>) => ClientCall) | null;
  /** An origin poll: a trace of its own, whose `traceparent` goes to the origin with the poll. */
  poll: ((to: ClientRequest, url: string) => OriginSpan) | null;
} = { start: null, poll: null };

/** Runs one delivery attempt inside a CLIENT span; `outcome` reads its status (0: none) and error. */
export async function tracedCall<T>(
  name: string,
  url: string,
  attributes: Record<string, string | number>,
  run: () => Promise<T>,
  outcome: (result: T) => { status: number; error?: string },
): Promise<T> {
  const start = clientCalls.start;
  if (start === null) return run();
  const span = start(name, url, { 'http.request.method': 'POST', ...attributes });
  let result: T;
  try {
    result = await run();
  } catch (err) {
    span.end(0, err instanceof Error ? err.name : 'error');
    throw err;
  }
  const o = outcome(result);
  span.end(o.status, o.error);
  return result;
}
