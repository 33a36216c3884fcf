/**
 * The gateway's own key at the origin (upstream.api_key) must never reach a client. An origin may
 * echo the forwarded URL back in any spelling (percent escapes in either case, `+` read as a space,
 * PHP's JSON `\/`, `\uXXXX`, HTML entities, several of these nested), so the guard does not look for
 * a list of spellings: it compares a canonical form of what the origin sent with a canonical form
 * of the key. An answer that carries the key is refused whole (proxy.ts, cache/cache.ts), never
 * redacted: a redaction has to find every spelling in place, a refusal only has to notice one.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { decodeHTML } from 'entities';
import type { Logger } from 'pino';
import { decode, specErrorBody } from './bodies.js';
import { ANSWER_DROPPED } from './forwarded-headers.js';

// One layer of escapes: runs of percent escapes (any case), JSON escapes, HTML character
// references (numeric, and named from the whole HTML5 table, with or without the `;` the legacy
// names may drop), `+` (a space in a form), and NUL (ASCII text in UTF-16).
const ESCAPE =
  /((?:%[0-9a-f]{2})+)|\\u([0-9a-f]{4})|\\([\\/"'bfnrt])|&#x([0-9a-f]{1,6});?|&#(\d{1,7});?|(&[a-z][a-z0-9]{1,31};?)|\+|\0/gi;
const JSON_ESCAPED: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
// Layers of escapes undone at most: an echo escaped more deeply than this is not read as the key.
const ROUNDS = 6;

function percentRun(run: string): string {
  try {
    return decodeURIComponent(run);
  } catch {
    // Not UTF-8: each escape as the byte it names.
    return run.replace(/%([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
  }
}

function codePoint(n: number): string {
  return n <= 0x10ffff ? String.fromCodePoint(n) : '';
}

/**
 * A named reference as HTML5 reads it (entities knows the table, and how a legacy name such as
 * `&amp` is read at the start of a longer run). Names are case-sensitive in HTML5, but a guard
 * must rather refuse too much: a name known only in lower case (`&AMP;`, `&Sol;`) is read too.
 */
function namedReference(ref: string): string {
  const read = decodeHTML(ref);
  return read !== ref ? read : decodeHTML(ref.toLowerCase());
}

function unescapeOnce(text: string): string {
  return text.replace(
    ESCAPE,
    (m, pct?: string, u?: string, json?: string, hex?: string, dec?: string, named?: string) => {
      if (pct !== undefined) return percentRun(pct);
      if (u !== undefined) return String.fromCharCode(Number.parseInt(u, 16));
      if (json !== undefined) return JSON_ESCAPED[json] ?? json;
      if (hex !== undefined) return codePoint(Number.parseInt(hex, 16));
      if (dec !== undefined) return codePoint(Number(dec));
      if (named !== undefined) return namedReference(named);
      return m === '+' ? ' ' : '';
    },
  );
}

/** Text with every layer of escapes undone, `+` as a space, in lower case: two spellings of one string meet here. */
export function canonical(text: string): string {
  let out = text;
  for (let i = 0; i < ROUNDS; i++) {
    const next = unescapeOnce(out);
    if (next === out) break;
    out = next;
  }
  return out.toLowerCase();
}

/** What an origin answer came to: nothing of the key, the key, or a body that could not be read to tell. */
export type Checked = 'clean' | 'key' | 'unreadable';

/** The one error line of an answer refused (it names neither the key nor the spelling found). */
export const REFUSED_LOG: Record<Exclude<Checked, 'clean'>, string> = {
  key: 'the origin answer carried the service key (upstream.api_key): not passed on, not stored; answered 502',
  unreadable:
    'the origin answer could not be read to check it for the service key (Content-Encoding): not passed on; answered 502',
};

/** How often a route's refusals are logged at most, after the first. */
const LOG_EVERY_MS = 60_000;

/**
 * The error line of refused answers: at once for a route's first, then at most one a minute with
 * how many were refused since. A client may repeat the request that makes the origin echo the key
 * (it is not counted): it must not flood the log.
 */
export class RefusalLog {
  private readonly last = new Map<string, { at: number; since: number }>();

  constructor(
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  note(route: string, status: number, why: Exclude<Checked, 'clean'>): void {
    // Bounded: one entry per proxy_paths entry and reason.
    const key = `${why} ${route}`;
    const seen = this.last.get(key);
    const now = this.now();
    if (seen && now - seen.at < LOG_EVERY_MS) return void seen.since++;
    this.log.error({ route, status, refused_since_last_line: seen?.since ?? 0 }, REFUSED_LOG[why]);
    this.last.set(key, { at: now, since: 0 });
  }
}

/** Thrown into a watched stream when the key shows up in it. */
export class KeyEchoed extends Error {
  constructor() {
    super('the origin answer carried the service key');
  }
}

export class KeyGuard {
  private readonly needle: string;
  /** How much of a stream is held back and re-read with the next chunk: more than any spelling of the key. */
  private readonly window: number;

  constructor(serviceKey: string) {
    this.needle = canonical(serviceKey);
    this.window = 32 * serviceKey.length + 64;
  }

  /** Whether `text` carries the key in any spelling. */
  carries(text: string): boolean {
    return this.needle !== '' && canonical(text).includes(this.needle);
  }

  /** Whether a header name or value passed on (all but `dropped`) carries the key. */
  inHeaders(headers: IncomingHttpHeaders, dropped: readonly string[]): boolean {
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined || dropped.includes(name)) continue;
      if (this.carries(name) || this.carries(Array.isArray(value) ? value.join('\n') : value)) return true;
    }
    return false;
  }

  /**
   * Whether a whole body carries the key, read through its Content-Encoding; null when it cannot
   * be read (an encoding not known, or a corrupt one): then nobody can say it does not.
   */
  inBody(raw: Buffer, encoding: string | string[] | undefined): boolean | null {
    // No body (HEAD, 204, 304) has nothing to decode, whatever its Content-Encoding says.
    if (raw.length === 0) return false;
    let body: Buffer | null;
    try {
      body = decode(raw, Array.isArray(encoding) ? encoding.join(',') : encoding);
    } catch {
      return null;
    }
    return body === null ? null : this.carries(body.toString('utf8'));
  }

  /**
   * An origin answer read whole, as it would be passed on: an error status passes on nothing of
   * the origin's but the spec's error body; anything else its headers and body.
   */
  inAnswer(status: number, headers: IncomingHttpHeaders, body: Buffer): Checked {
    if (status >= 400) {
      const own = specErrorBody(body);
      return own !== null && this.carries(own) ? 'key' : 'clean';
    }
    if (this.inHeaders(headers, ANSWER_DROPPED)) return 'key';
    const found = this.inBody(body, headers['content-encoding']);
    return found === null ? 'unreadable' : found ? 'key' : 'clean';
  }

  /**
   * A stream too large to be read whole, checked as it passes: `window` bytes are held back until
   * the next chunk has been read with them, so no part of a spelling of the key is written before
   * the whole of it is seen. On the key the stream fails with KeyEchoed. `already` is what was read
   * before. Only for an identity-encoded body.
   */
  watch(already: Buffer[]): Transform {
    const guard = this;
    const decoder = new StringDecoder('utf8');
    let tail = '';
    let held = Buffer.alloc(0);
    const check = (text: string): boolean => {
      const seen = tail + text;
      tail = seen.slice(-guard.window);
      return guard.carries(seen);
    };
    const t = new Transform({
      transform(chunk: Buffer, _enc, done: TransformCallback): void {
        if (check(decoder.write(chunk))) return done(new KeyEchoed());
        const all = Buffer.concat([held, chunk]);
        const cut = Math.max(0, all.length - guard.window);
        if (cut > 0) this.push(all.subarray(0, cut));
        held = Buffer.from(all.subarray(cut));
        done();
      },
      flush(done: TransformCallback): void {
        if (check(decoder.end())) return done(new KeyEchoed());
        done(null, held);
      },
    });
    for (const chunk of already) t.write(chunk);
    return t;
  }
}
