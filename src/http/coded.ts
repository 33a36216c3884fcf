/**
 * A metered answer of 1 KiB or more (historical.php, changes.php) in the coding the request
 * prefers, from the compressed forms kept with its Prepared (encoding.ts): nothing is compressed
 * here but a first-time whole answer, once.
 */
import { send } from './answer.js';
import { type Compressed, negotiate, type SplicedGzip, splicedGzip } from './encoding.js';
import type { RateFields } from './headers.js';
import { headerValue } from './request.js';
import type { Exchange, Prepared } from './types.js';

export function sendCoded(x: Exchange, p: Prepared, c: Compressed, rate: RateFields, usage: string): void {
  const accept = headerValue(x.req, 'accept-encoding');
  const { answers } = x.g;
  if (c.whole !== null) {
    const enc = accept === undefined ? null : c.whole();
    const coding = negotiate(accept, enc?.br != null, enc?.gzip != null);
    const bytes = coding === 'identity' ? null : (enc?.[coding] as Buffer);
    if (bytes === null)
      return send(x, 200, answers.counted200(p.contentType, p.bytes, rate, x.etag, coding), p.head + p.tail);
    return send(x, 200, answers.counted200(p.contentType, bytes.length, rate, x.etag, coding), bytes);
  }
  const coding = negotiate(accept, false, c.spliced !== null);
  const tail = usage + p.tail;
  if (coding === 'identity')
    return send(x, 200, answers.counted200(p.contentType, p.bytes + usage.length, rate, x.etag, coding), p.head + tail);
  const body = splicedGzip(c.spliced as SplicedGzip, tail);
  send(x, 200, answers.counted200(p.contentType, body.length, rate, x.etag, coding), body);
}
