/**
 * What may be passed through to the origin at all, checked before anything is counted: the
 * pass-through route (features/pass-through) refuses the rest with 400.
 */
import type { IncomingMessage } from 'node:http';

/**
 * A request body would be forwarded without its framing (the hop-by-hop Transfer-Encoding is
 * not forwarded) and be read by the origin as another request on a shared connection.
 */
export const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/**
 * A path the origin would read differently from the gateway (dot segments, encoded slashes or
 * dots, backslashes) could reach an origin path outside `proxy_paths` with the service key.
 */
export const isSafeProxyPath = (path: string): boolean =>
  !/%2e|%2f|%5c|\\/i.test(path) && !path.split('/').some((seg) => seg === '.' || seg === '..');
