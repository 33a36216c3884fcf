/**
 * usage.php: the account's position in its period, without counting. The key is judged exactly
 * as on a metered request (throttle, checksum, store), so an invalid key still counts towards
 * the invalid-key throttle: a free check must not become a free key scanner.
 */

import { isGatewayError } from '../../errors.js';
import { crashed, fail, failRetry, send } from '../../http/answer.js';
import { storeError, storeWorked } from '../../http/context.js';
import { invalidKey, keyOf } from '../../http/metered.js';
import { rateFields } from '../../http/rate.js';
import type { Exchange } from '../../http/types.js';
import type { MeterResult } from '../../quota/meter.js';
import { usageJson } from '../../quota/usage.js';

const JSON_TYPE = 'application/json';
const HEAD = '{"success":true,"usage":';

export function usageCheck(x: Exchange, search: string): void {
  const { g } = x;
  const keyHash = keyOf(x, search);
  if (keyHash === null) return;
  g.meter
    .peek(keyHash)
    .then(
      (result) => {
        storeWorked(g);
        answer(x, result);
      },
      (err: unknown) => {
        if (!isGatewayError(err, 'STORE_UNAVAILABLE')) return crashed(x, err);
        storeError(g, err, 'refused');
        failRetry(x, 'unavailable', 1);
      },
    )
    .catch((err: unknown) => crashed(x, err));
}

function answer(x: Exchange, result: MeterResult): void {
  if (result.kind === 'unknown') return invalidKey(x, 'unknown');
  if (result.kind === 'inactive') return fail(x, 'inactive_key');
  const { entry, used } = result;
  x.entry = entry;
  const body = `${HEAD}${usageJson(entry.usage, used, entry.allowance.limit)}}`;
  send(x, 200, x.g.answers.counted200(JSON_TYPE, body.length, rateFields(entry, used, x.g.clock.now())), body);
}
