import { KEY_PREFIX, KEY_TAIL_LENGTH, tailValidates } from '../key-format.js';

/*
 * The rule (docs/security.md, "Keys in logs"): redact what is or may be a key, and nothing else.
 * 1. A key position: the value after a name a key is sent under (api_key, apikey, api-key,
 *    x-api-key, key; any case, `_` maybe percent-encoded), then `=`, `:` or `%3D`, maybe quoted.
 * 2. The key prefix `fpg_` (in any case, maybe percent-encoded) and what follows it.
 * 3. A string whose key checksum validates: 38 characters (a key without its prefix) inside one
 *    word, inside a word once percent-decoded (twice encoded too; what the escapes stood for
 *    dropped, so `%20` between pieces hides nothing), or made of consecutive whole
 *    words (a key split over parameters: `?<19>=<19>` with names as words, `?a=<19>&b=<19>`
 *    with names left out). Callers scrub a URL before redacting `api_key` (http/request.ts), so
 *    a piece in a key position is still there to complete the checksum.
 * A length is no rule: file names, event ids and hashes are logged as they are.
 */

const POSITION =
  /(?<![A-Za-z0-9_%-])((?:x-)?api(?:[_-]|%5f)?key|key)((?:\\?"|%22)?\s*(?:=|%3d|:)\s*(?:\\?"|%22)?)((?:[A-Za-z0-9_-]|%[0-9A-Fa-f]{2}|%)+(?:\[REDACTED\])?)/gi;
const POSITION_HINT = /key/i;
const PREFIXED = /(?:f|%66)(?:p|%70)(?:g|%67)(?:_|%5f)(?:[a-z0-9_-]|%[0-9a-f]{2})+/gi;
const PREFIX_HINT = /fpg|%/i;
// A word with percent escapes in it; its decoded form may hold a key.
const ENCODED = /[A-Za-z0-9_-]*(?:%[0-9A-Fa-f]{2}[A-Za-z0-9_-]*)+/g;
const ESCAPE = /%([0-9A-Fa-f]{2})/g;
// What an escape may have put between the pieces of a key (`%20`, `%2F`).
const NON_WORD = /[^A-Za-z0-9_-]+/g;
const PREFIX_LENGTH = KEY_PREFIX.length;
const REDACTED = '[REDACTED]';
const EQUALS = 61;

/** base64url: A-Z a-z 0-9 - _ (a loop over char codes: a regex per word cost more than the rest). */
const isWordChar = (c: number): boolean =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 45 || c === 95;

const prefixed = (text: string, at = 0): boolean => text.slice(at, at + PREFIX_LENGTH).toLowerCase() === KEY_PREFIX;

/** True when some 38 characters of `text` are a key's body and checksum. */
function holdsKey(text: string): boolean {
  for (let i = 0; i + KEY_TAIL_LENGTH <= text.length; i++) if (tailValidates(text, i)) return true;
  return false;
}

/**
 * How many words of `run` (indexes into the word offsets `at`/`end` in `line`) from `first` on
 * together make a key, with or without its prefix; 0 when they make none.
 */
function keyRun(line: string, at: number[], end: number[], run: number[], first: number): number {
  let length = 0;
  for (let j = first; j < run.length; j++) {
    length += (end[run[j] as number] as number) - (at[run[j] as number] as number);
    if (length < KEY_TAIL_LENGTH) continue;
    if (j === first || length > KEY_TAIL_LENGTH + PREFIX_LENGTH) return 0;
    if (
      length !== KEY_TAIL_LENGTH &&
      (length !== KEY_TAIL_LENGTH + PREFIX_LENGTH || !prefixed(line, at[run[first] as number]))
    )
      continue;
    let text = '';
    for (let k = first; k <= j; k++) text += line.slice(at[run[k] as number], end[run[k] as number]);
    if (tailValidates(text, text.length - KEY_TAIL_LENGTH)) return j - first + 1;
  }
  return 0;
}

/**
 * Rule 3 on plain words: a word that holds a key, and each word of a run of words that makes one,
 * is redacted. Runs are tried twice: over all words (a parameter's name may be a piece) and over
 * all words but parameter names (`?a=<19>&b=<19>`, the names between the pieces no part of them).
 */
function checksummed(line: string): string {
  const at: number[] = [];
  const end: number[] = [];
  const hit: boolean[] = [];
  const values: number[] = [];
  let letters = 0;
  let any = false;
  for (let i = 0; i < line.length; ) {
    if (!isWordChar(line.charCodeAt(i))) {
      i++;
      continue;
    }
    const a = i;
    while (i < line.length && isWordChar(line.charCodeAt(i))) i++;
    const whole = i - a >= KEY_TAIL_LENGTH && holdsKey(line.slice(a, i));
    any ||= whole;
    letters += i - a;
    if (line.charCodeAt(i) !== EQUALS) values.push(at.length);
    at.push(a);
    end.push(i);
    hit.push(whole);
  }
  const all = at.map((_, k) => k);
  const runs = letters < KEY_TAIL_LENGTH ? [] : values.length === all.length ? [all] : [all, values];
  for (const run of runs)
    for (let i = 0; i < run.length; i++) {
      const n = hit[run[i] as number] ? 0 : keyRun(line, at, end, run, i);
      for (let k = i; k < i + n; k++) hit[run[k] as number] = true;
      any ||= n > 0;
    }
  if (!any) return line;
  let out = '';
  let from = 0;
  for (let k = 0; k < at.length; k++) {
    if (!hit[k]) continue;
    out += line.slice(from, at[k]) + (prefixed(line, at[k]) ? KEY_PREFIX : '') + REDACTED;
    from = end[k] as number;
  }
  return out + line.slice(from);
}

/** Percent-decoded as often as it still holds escapes (three rounds at most). */
function decoded(word: string): string {
  let text = word;
  for (let round = 0; round < 3 && text.includes('%'); round++)
    text = text.replace(ESCAPE, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return text;
}

/** Rule 3 on percent-encoded words, and rules 1 and 2. */
function positioned(line: string): string {
  let out = line;
  if (out.includes('%'))
    out = out.replace(ENCODED, (w) =>
      w.length >= KEY_TAIL_LENGTH && holdsKey(decoded(w).replace(NON_WORD, '')) ? REDACTED : w,
    );
  if (POSITION_HINT.test(out)) out = out.replace(POSITION, (_, name: string, sep: string) => name + sep + REDACTED);
  return PREFIX_HINT.test(out) ? out.replace(PREFIXED, `${KEY_PREFIX}${REDACTED}`) : out;
}

/**
 * Every logged string with what is or may be a key replaced (the rule above). Keys arrive in the
 * wrong place (`?key=`, a path segment, userinfo, a header echoed in an error, pieces of one);
 * known fields are redacted by pino before this (logger.ts).
 */
export const scrubKeys = (line: string): string =>
  positioned(line.length >= KEY_TAIL_LENGTH ? checksummed(line) : line);
