import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { type AddressPolicy, checkedAddress, pinnedLookup, RefusedAddress, type Target } from '../events/addresses.js';

/** The most of an answer read: a receiver that streams more is cut off there. */
export const MAX_ANSWER_BYTES = 1024;

export interface SendPolicy extends AddressPolicy {
  timeoutMs: number;
  /** Bytes of the answer kept in the outcome. */
  keep: number;
}

export interface SendOutcome {
  /** 2xx within the timeout. */
  ok: boolean;
  /** The answer's status, null when there was none. */
  status: number | null;
  /** Why it failed, in a word or two (refused, timeout, unreachable, status …), null when ok. */
  error: string | null;
  /** The first `keep` bytes of the answer read, as text ('' when none came). */
  answer: string;
}

/** An outcome before the start of the answer is added to it. */
type Ending = Omit<SendOutcome, 'answer'>;

/**
 * POSTs one signed event. The host is resolved and checked here, at every delivery, and the
 * connection goes to that checked address (its own `lookup`), so a name that changes between
 * the check and the connection (DNS rebinding) cannot lead elsewhere. A hard timeout covers
 * resolving, connecting and the answer; redirects are not followed (a 3xx is a failure); at most
 * MAX_ANSWER_BYTES of the answer are read. Never throws.
 */
export async function sendWebhook(
  url: URL,
  headers: Record<string, string>,
  body: string,
  policy: SendPolicy,
): Promise<SendOutcome> {
  const deadline = Date.now() + policy.timeoutMs;
  let target: Target;
  try {
    target = await withTimeout(checkedAddress(url, policy), policy.timeoutMs);
  } catch (err) {
    if (err instanceof RefusedAddress) return { ok: false, status: null, error: `refused: ${err.message}`, answer: '' };
    return { ok: false, status: null, error: 'timeout', answer: '' };
  }
  return new Promise((resolve) => {
    let settled = false;
    const kept: Buffer[] = [];
    let read = 0;
    const finish = (outcome: Ending): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve({ ...outcome, answer: Buffer.concat(kept).subarray(0, policy.keep).toString('utf8') });
    };
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup: pinnedLookup(target),
      agent: false,
    });
    // An answer whose status arrived in time counts, even if its body is still coming.
    let answered: Ending | null = null;
    const timer = setTimeout(
      () => finish(answered ?? { ok: false, status: null, error: 'timeout' }),
      Math.max(1, deadline - Date.now()),
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish({ ok: false, status: null, error: `unreachable: ${err.code ?? err.message}` }),
    );
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      answered = { ok, status, error: ok ? null : `status ${status}` };
      const done = (): void => finish(answered as Ending);
      res.on('data', (chunk: Buffer) => {
        if (read < policy.keep) kept.push(chunk);
        read += chunk.length;
        if (read >= MAX_ANSWER_BYTES) done();
      });
      res.on('end', done);
      res.on('error', done);
    });
    req.end(body);
  });
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
