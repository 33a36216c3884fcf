/**
 * usage.php: the account's position in its period, without counting. The key is judged exactly
 * as on a metered request (throttle, checksum, store), so an invalid key still counts towards
 * the invalid-key throttle: a free check must not become a free key scanner.
 */

import type { Exchange } from '../../http/core-types.js';
import { rateFields, send, uncounted } from '../../http/metered/pipeline.js';
import type { CountedResult } from '../../quota/meter.js';
import { usageJson } from '../../quota/usage.js';

const JSON_TYPE = 'application/json';
const HEAD = '{"success":true,"usage":';

export function usageCheck(x: Exchange, search: string): void {
  uncounted(x, search, answer);
}

function answer(x: Exchange, { entry, used }: CountedResult): void {
  // The key that asked, after `usage`: a key's name may be any text, so its length is in bytes.
  const { id, name, expires_at } = entry.key;
  const key = JSON.stringify({ id, name, expires_at });
  const body = `${HEAD}${usageJson(entry, used, entry.allowance.limit)},"key":${key}}`;
  send(
    x,
    200,
    x.services.headers.counted200(JSON_TYPE, Buffer.byteLength(body), rateFields(entry, used, x.services.clock.now())),
    body,
  );
}
