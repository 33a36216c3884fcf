/**
 * The part of RESP2 the lean consume connection (lean-consume.ts) speaks: commands it writes as
 * one string each, replies it reads straight from the socket's Buffers. Only what CONSUME and the
 * connection's handshake answer: simple strings, errors, integers, bulk strings and arrays.
 */

/** A reply; an error reply is a RespError (a value, not thrown: the caller decides). */
export type RespValue = number | string | null | RespError | RespValue[];

export class RespError extends Error {
  override name = 'ReplyError';
}

const INCOMPLETE = Symbol('incomplete');
const CR = 13;

/** One argument of a command: `$LEN\r\nTEXT\r\n` (LEN in bytes). */
export function bulk(text: string): string {
  return `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
}

/** A whole command: `*N\r\n` then each argument. */
export function command(...args: string[]): string {
  let out = `*${args.length}\r\n`;
  for (const a of args) out += bulk(a);
  return out;
}

/**
 * Reads replies as they arrive. A reply split across chunks waits for the rest; the leftover is
 * kept as a view of the chunk, so a reply that arrives whole (nearly all) costs no copy.
 */
export class RespParser {
  private rest: Buffer | null = null;
  private at = 0;

  constructor(private readonly onReply: (reply: RespValue) => void) {}

  feed(chunk: Buffer): void {
    const buf = this.rest === null ? chunk : Buffer.concat([this.rest, chunk]);
    this.rest = null;
    let start = 0;
    while (start < buf.length) {
      this.at = start;
      const reply = this.value(buf);
      if (reply === INCOMPLETE) break;
      start = this.at;
      this.onReply(reply);
    }
    if (start < buf.length) this.rest = buf.subarray(start);
  }

  /** Forgets a partial reply: the connection it came from is gone. */
  reset(): void {
    this.rest = null;
  }

  private value(buf: Buffer): RespValue | typeof INCOMPLETE {
    if (this.at >= buf.length) return INCOMPLETE;
    const type = buf[this.at++];
    switch (type) {
      case 0x3a: // ':'
        return this.integer(buf);
      case 0x24: {
        // '$'
        const len = this.integer(buf);
        if (len === INCOMPLETE) return INCOMPLETE;
        if (len < 0) return null;
        const end = this.at + len;
        if (end + 2 > buf.length) return INCOMPLETE;
        const text = buf.toString('utf8', this.at, end);
        this.at = end + 2;
        return text;
      }
      case 0x2a: {
        // '*'
        const n = this.integer(buf);
        if (n === INCOMPLETE) return INCOMPLETE;
        if (n < 0) return null;
        const items = new Array<RespValue>(n);
        for (let i = 0; i < n; i++) {
          const item = this.value(buf);
          if (item === INCOMPLETE) return INCOMPLETE;
          items[i] = item;
        }
        return items;
      }
      case 0x2b: // '+'
      case 0x2d: {
        // '-'
        const end = buf.indexOf(CR, this.at);
        if (end < 0 || end + 1 >= buf.length) return INCOMPLETE;
        const text = buf.toString('utf8', this.at, end);
        this.at = end + 2;
        return type === 0x2b ? text : new RespError(text);
      }
    }
    throw new Error(`unexpected reply type byte ${String(type)} from Redis`);
  }

  /** The digits up to CRLF (optionally negative), read without making a string. */
  private integer(buf: Buffer): number | typeof INCOMPLETE {
    let i = this.at;
    const negative = buf[i] === 0x2d;
    if (negative) i++;
    let n = 0;
    for (; i < buf.length; i++) {
      const c = buf[i] as number;
      if (c === CR) {
        if (i + 1 >= buf.length) return INCOMPLETE;
        this.at = i + 2;
        return negative ? -n : n;
      }
      n = n * 10 + (c - 0x30);
    }
    return INCOMPLETE;
  }
}
