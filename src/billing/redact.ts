import { canonical } from '../upstream/key-guard.js';

// A receiver's error text is kept (the event's last_error, the log) up to this many characters.
const KEPT = 200;
// The shortest start of a secret, written as it is, taken for an echo of it (a receiver may
// echo `Authorization` cut short); in another spelling, where chance matches are likelier, this.
const MIN_START = 4;
const MIN_START_SPELLED = 8;
// Base64 as receivers echo a header (Basic credentials, a dump of the request): standard or URL-safe.
const BASE64_RUN = /[A-Za-z0-9+/_-]{8,}={0,2}/g;
const NOT_KEPT = "[not kept: it repeated the exporter's secret in another spelling]";

/**
 * A receiver's error text as it may be kept: each secret cut out before the text is cut to 200
 * characters, so no part of one is left at the cut. A secret written as it is, or a start of it
 * of 4 characters or more at the start of a word (a receiver that echoes `Authorization` cut
 * short), becomes `[REDACTED]`. A text that still carries one in another spelling (escaped as the
 * service-key guard reads them, base64, reversed) is not kept at all: a redaction has to find
 * every spelling in place, a refusal only has to notice one.
 */
export function redacted(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets.filter((s) => s !== '')) {
    out = out.split(secret).join('[REDACTED]');
    for (const [start, end] of startsOf(out, secret, MIN_START).reverse())
      out = `${out.slice(0, start)}[REDACTED]${out.slice(end)}`;
  }
  if (secrets.some((s) => s !== '' && carries(out, s))) return NOT_KEPT;
  return out.replace(/\s+/g, ' ').trim().slice(0, KEPT);
}

/** Where `text` has `needle`, or a start of it of `min` characters or more, at the start of a word. */
function startsOf(text: string, needle: string, min: number): Array<[number, number]> {
  const first = needle.slice(0, Math.min(min, needle.length));
  const found: Array<[number, number]> = [];
  for (let i = text.indexOf(first); i !== -1; i = text.indexOf(first, i + 1)) {
    if (i > 0 && /[\p{L}\p{N}]/u.test(text[i - 1] as string)) continue;
    let end = i + first.length;
    while (end - i < needle.length && text[end] === needle[end - i]) end++;
    found.push([i, end]);
  }
  return found;
}

/** Whether `text` holds `secret`, or a start of it, in a spelling other than the one written. */
function carries(text: string, secret: string): boolean {
  const needle = canonical(secret);
  const read = canonical(text);
  return [read, [...read].reverse().join(''), ...decodedRuns(text)].some(
    (s) => s.includes(needle) || startsOf(s, needle, MIN_START_SPELLED).length > 0,
  );
}

/** Each run of base64 in `text` decoded, from each of the four places an encoding may start. */
function decodedRuns(text: string): string[] {
  const out: string[] = [];
  for (const [run] of text.matchAll(BASE64_RUN))
    for (let skip = 0; skip < 4; skip++) out.push(canonical(Buffer.from(run.slice(skip), 'base64').toString('latin1')));
  return out;
}
