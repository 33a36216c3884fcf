/**
 * The request pipeline as a feature's own handler sees it: take the request's key (`keyOf`), map
 * the meter's outcome to the answer (outcome.ts, the one mapping every route that takes a key
 * shares), answer, and account for an answer written elsewhere. Features import the pipeline
 * from here only (.dependency-cruiser.cjs); its passes (index.ts, key.ts, count.ts, outcome.ts)
 * and the core behind them (../answer.ts, ../listener-context.ts) may change behind it.
 */
import type { CountedResult } from '../../quota/meter.js';
import { clientOf, crashed } from '../answer.js';
import type { Exchange } from '../core-types.js';
import { keyRequest } from '../key-check.js';
import { storeWorked } from '../listener-context.js';
import { keyOf } from './key.js';
import { admitted, storeFailed } from './outcome.js';

export { clientOf, crashed, fail, failRetry, overTls, record, send, viaTrustedProxy } from '../answer.js';
export { readBody } from '../body.js';
export { warnOfExpiry } from '../key-check.js';
export type { Target } from '../request.js';
export { REQUEST_ID_HEADER } from '../request-id.js';
export { type CountedThen, countThen } from './count.js';
export { keyOf } from './key.js';
export { admitted, answerLimited, refuse, storeFailed } from './outcome.js';
export { rateFields, rateHeaders } from './rate.js';

/**
 * A route that reads the key's usage without counting it (usage.php, usage-history.php): the key
 * is judged as on a metered request, and `answer` has the account once the meter admits it. The
 * store unreachable, here or in `answer`, is a 503 even under `store.on_error: allow`: these
 * answers are the store's own data.
 */
export function uncounted(
  x: Exchange,
  search: string,
  answer: (x: Exchange, counted: CountedResult) => void | Promise<void>,
): void {
  const key = keyOf(x, search);
  if (key === null) return;
  x.services.meter
    .peek(key.hash, keyRequest(x), clientOf(x))
    .then((result) => {
      storeWorked(x.core);
      const counted = admitted(x, result);
      return counted === null ? undefined : answer(x, counted);
    })
    .catch((err: unknown) => void storeFailed(x, key.hash, err, 'nothing'))
    .catch((err: unknown) => crashed(x, err));
}
