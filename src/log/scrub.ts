// Anything shaped like an API key (`fpg_` and what follows), percent-encoded or not, in any case.
const KEY_SHAPE = /(?:f|%66)(?:p|%70)(?:g|%67)(?:_|%5f)(?:[a-z0-9_-]|%[0-9a-f]{2})+/gi;
const KEY_HINT = /fpg|%/i;
// What is left of a key without its prefix, encoded twice or broken by an invalid escape: a run of
// 24 or more base64url characters and percent signs (a key's body is 38; an account id is 21).
const LONG_RUN = /[A-Za-z0-9_%-]{24,}/g;

/**
 * Every logged string with key-shaped text replaced: keys sent in the wrong place (`?key=`, a
 * path segment, userinfo, a header echoed in an error) are logged as `fpg_[REDACTED]`, and any
 * other run long enough to hold most of a key as `[REDACTED]`. The cheap test first keeps lines
 * without a hint of the prefix (nearly all) from the prefix scan.
 */
export const scrubKeys = (line: string): string =>
  (KEY_HINT.test(line) ? line.replace(KEY_SHAPE, 'fpg_[REDACTED]') : line).replace(LONG_RUN, '[REDACTED]');

/**
 * A redacted URL as the access log writes it: JSON-encoded, and scrubbed, since only the URL can
 * carry a key in the wrong place (scanning the whole line would cost 3 times more).
 */
export const accessUrl = (redacted: string): string => JSON.stringify(scrubKeys(redacted));
