/** The admin request's shape as the listener checks it before any route reads it: a browser's writes refused, JSON bodies bounded. */
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../failures.js';

const MAX_BODY_BYTES = 64 * 1024;

// The whole value: Fetch reads `application/json, text/plain` as text/plain (no preflight).
const JSON_TYPE = /^application\/json\s*(;[^,]*)?$/i;

/**
 * Without a token nothing but the request's shape tells a script from a web page the operator
 * has open: browsers send `Origin` on every cross-origin write (and `Sec-Fetch-Site`), and a
 * page can send a body without a CORS preflight only as text/plain, form or multipart. So such
 * requests are refused whatever the route reads; curl and scripts send neither.
 */
export function browserProblem(req: IncomingMessage): GatewayError | null {
  const site = req.headers['sec-fetch-site'];
  if (req.headers.origin !== undefined || (site !== undefined && site !== 'none' && site !== 'same-origin'))
    return new GatewayError(
      'FORBIDDEN',
      'without an admin token, requests from a web page (Origin, Sec-Fetch-Site) are refused',
    );
  const type = req.headers['content-type'];
  if ((type !== undefined || hasBody(req)) && !JSON_TYPE.test(type ?? ''))
    return new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'expected Content-Type: application/json, or no body');
  return null;
}

export const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

export function readJson(req: IncomingMessage): Promise<unknown> {
  const type = req.headers['content-type'] ?? '';
  if (!JSON_TYPE.test(type))
    return Promise.reject(new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'expected Content-Type: application/json'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) return void chunks.push(c);
      // Answer now and discard the rest; the connection closes after the answer.
      req.removeAllListeners('data');
      req.resume();
      reject(new GatewayError('PAYLOAD_TOO_LARGE', `body larger than ${MAX_BODY_BYTES} bytes`));
    });
    req.on('error', reject);
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(new GatewayError('BAD_REQUEST', '(body): not valid JSON'));
      }
    });
  });
}
