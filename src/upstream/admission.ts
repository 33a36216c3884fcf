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

// Raw: `\` (a separator on Windows origins), `;` (Tomcat and Jetty read `..;` as `..`) and
// anything outside printable ASCII, which an origin may decode in its own charset.
const UNSAFE_RAW = /[^\x21-\x7e]|[;\\]/;
const DOT_SEGMENT = /(?:^|\/)\.{1,2}(?:\/|$)/;
// Escaped: a dot, a slash or a backslash; `%25`, which an origin that decodes twice reads as an
// escape of its own; `;`; and a control (a NUL ends the path in C code, a tab or CR splits it).
const UNSAFE_ESCAPE = /%(?:2e|2f|5c|25|3b|[01][0-9a-f]|7f)/i;
// C1 controls, once the escapes are decoded.
const C1 = /[\x80-\x9f]/;

/**
 * A path the origin could read as another one (dot segments, a path parameter, escaped dots,
 * slashes, percents or controls, `%u` escapes, overlong or otherwise invalid UTF-8, a character
 * Unicode normalisation would change) could reach an origin path outside `proxy_paths` with the
 * service key. A path without `%` is decided by two expressions.
 */
export function isSafeProxyPath(path: string): boolean {
  if (UNSAFE_RAW.test(path) || DOT_SEGMENT.test(path)) return false;
  if (!path.includes('%')) return true;
  if (UNSAFE_ESCAPE.test(path)) return false;
  let decoded: string;
  try {
    // Throws on `%u002e`, a `%` without two hex digits, and UTF-8 that is overlong or invalid.
    decoded = decodeURIComponent(path);
  } catch {
    return false;
  }
  // Fullwidth `．．／` (U+FF0E, U+FF0F) is `../` to an origin that normalises (NFKC).
  return !C1.test(decoded) && decoded.normalize('NFKC') === decoded;
}
