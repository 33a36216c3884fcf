/**
 * usage.php: the account's position in its period, without counting. The key is judged exactly
 * as on a metered request (throttle, checksum, store), so an invalid key still counts towards
 * the invalid-key throttle: a free check must not become a free key scanner.
 */

import { admitted, crashed, keyOf, rateFields, send, storeFailed, storeWorked } from '../../http/pipeline.js';
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
      (err: unknown) => void storeFailed(x, err, 'nothing'),
    )
    .catch((err: unknown) => crashed(x, err));
}

function answer(x: Exchange, result: MeterResult): void {
  const counted = admitted(x, result);
  if (counted === null) return;
  const { entry, used } = counted;
  const body = `${HEAD}${usageJson(entry.usage, used, entry.allowance.limit)}}`;
  send(x, 200, x.g.answers.counted200(JSON_TYPE, body.length, rateFields(entry, used, x.g.clock.now())), body);
}
