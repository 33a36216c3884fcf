import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import {
  checkedAddress,
  OPERATOR_SETTING,
  pinnedLookup,
  type RefusedAddress,
  type Target,
} from '../events/addresses.js';

// Enough of an answer for an error's code and message; the rest is not read.
const MAX_ANSWER_BYTES = 8192;

/** A billing system's answer, or why there was none (`refused`: the gateway refused its address). */
export type Answer =
  | { kind: 'answer'; status: number; retryAfter: string | null; location: string | null; body: string }
  | { kind: 'none'; error: string }
  | { kind: 'refused'; error: string };

/**
 * POSTs one request with a hard timeout over resolving, connecting, sending and the answer. The
 * connection goes to the receiver's address as checked by the webhooks' rule (`checked`). No
 * redirect is followed. Never throws. The headers carry the secret: nothing here logs them.
 */
export async function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  signal: AbortSignal,
  allowPrivate: boolean,
): Promise<Answer> {
  const deadline = Date.now() + timeoutMs;
  const target = await checked(url, allowPrivate, timeoutMs, signal);
  if ('kind' in target) return target;
  return new Promise((resolve) => {
    let done = false;
    const finish = (a: Answer): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolve(a);
    };
    const request = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup: pinnedLookup(target),
      agent: false,
    });
    const timer = setTimeout(
      () => finish({ kind: 'none', error: `no answer within ${timeoutMs} ms` }),
      Math.max(1, deadline - Date.now()),
    );
    signal.addEventListener('abort', () => finish({ kind: 'none', error: 'stopped' }), { once: true });
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish({ kind: 'none', error: `unreachable: ${err.code ?? err.message}` }),
    );
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let read = 0;
      const answered = (): void =>
        finish({
          kind: 'answer',
          status: res.statusCode ?? 0,
          retryAfter: typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : null,
          location: res.headers.location ?? null,
          body: Buffer.concat(chunks).toString('utf8'),
        });
      res.on('data', (chunk: Buffer) => {
        if (read < MAX_ANSWER_BYTES) chunks.push(chunk.subarray(0, MAX_ANSWER_BYTES - read));
        read += chunk.length;
        if (read >= MAX_ANSWER_BYTES) answered();
      });
      res.on('end', answered);
      res.on('error', answered);
    });
    req.end(body);
  });
}

/**
 * The receiver's address, resolved and checked as a webhook's is (events/addresses.ts: no
 * loopback, private, link-local or metadata address unless `allowPrivate`), within the timeout;
 * else why not. A name that does not resolve may come back (`none`, sent again); an address
 * refused stays so until the config changes (`refused`).
 */
function checked(url: string, allowPrivate: boolean, timeoutMs: number, signal: AbortSignal): Promise<Target | Answer> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ kind: 'none', error: `no answer within ${timeoutMs} ms` }), timeoutMs);
    signal.addEventListener('abort', () => resolve({ kind: 'none', error: 'stopped' }), { once: true });
    checkedAddress(new URL(url), { allowPrivate, allowHttp: true, privateSetting: OPERATOR_SETTING })
      .then(resolve, (err: RefusedAddress) =>
        resolve({ kind: err.reason === 'private' ? 'refused' : 'none', error: `refused: ${err.message}` }),
      )
      .finally(() => clearTimeout(timer));
  });
}
