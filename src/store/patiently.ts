import { isGatewayError } from '../failures.js';

// Each store call is bounded by the command timeout. A read that times out (a busy or
// failing-over Redis, a start on a loaded host) is tried again where doing it twice is harmless.
const ATTEMPTS = 4;
const RETRY_MS = 250;

/** `call`, tried again on STORE_UNAVAILABLE up to ATTEMPTS times in all: only for a call that is harmless twice. */
export async function patiently<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= ATTEMPTS || !isGatewayError(err, 'STORE_UNAVAILABLE')) throw err;
      await new Promise((r) => setTimeout(r, RETRY_MS * attempt));
    }
  }
}
