import pino, { type Logger } from 'pino';
import { LineBuffer } from './line-buffer.js';
import { BASE, type ScrubbedStream } from './logger.js';

const HEAD = Buffer.from('{"level":30,"time":');
const MS = Buffer.from(',"ms":');
const ACCOUNT = Buffer.from(',"account":');
const CLIENT = Buffer.from(',"client":"');
const REQ_ID = Buffer.from('","req_id":');
const TAIL = Buffer.from(',"msg":"request"}\n');
// The fixed parts, the time (16 digits), the status (3 or more) and `ms` (a number's shortest form).
const FIXED_BYTES = HEAD.length + MS.length + ACCOUNT.length + CLIENT.length + REQ_ID.length + TAIL.length + 48;
// A line longer than this (a URL near the header limit) is written as a string of its own.
const LINE_BYTES = 64 * 1024;

/**
 * The access log: one line per answer, in the shape pino writes (level, time, base fields, msg),
 * straight into the log's byte buffer (`LineBuffer`, shared with the app log by
 * `createLogging`), so a line costs no string joins and no encoding of a joined string. The part
 * from the base fields to the status is prebuilt once per route and method for the usual
 * request (`PATH?api_key=K`, whose URL is the route's). pino's own serialisation of these
 * fields costs more per line, and much more with the redaction the app log needs
 * (docs/performance.md). No field can hold a key: the URL is scrubbed and redacted before it
 * comes here (`accessUrl`, http/request.ts), and the rest are a method token, numbers, an
 * account id, an IP address and the request id. URL, account id and request id arrive
 * JSON-encoded, so that callers can encode them once (per route, per cached account) rather
 * than per line.
 */
export class AccessLog {
  private readonly lines: LineBuffer;
  /** A logger writing to a plain destination (the tests' in-process gateways): each line goes at once. */
  private readonly eachLine: boolean;
  private readonly base = `,${JSON.stringify(BASE).slice(1, -1)},"method":"`;
  /** Per method, the prebuilt prefixes of route URLs (`fixed` lines): as many as routes. */
  private readonly prefixes = new Map<string, Map<string, Buffer>>();

  constructor(log: Logger) {
    const stream = Reflect.get(log, pino.symbols.streamSym) as ScrubbedStream;
    const raw = stream.raw ?? stream;
    this.eachLine = stream.lines === undefined;
    this.lines = stream.lines ?? new LineBuffer(LINE_BYTES, (data) => raw.write(data.toString()));
  }

  /**
   * `accountJson` is undefined before the key is known to belong to one. `fixed`: `urlJson` is
   * a route's own (RouteContext.plainKeyUrl), whose prefix is kept.
   */
  write(
    method: string,
    urlJson: string,
    fixed: boolean,
    status: number,
    ms: number,
    accountJson: string | undefined,
    client: string,
    reqIdJson: string,
  ): void {
    const { lines } = this;
    // Kept for GET and HEAD only: other methods are rare here, and a set of them is no route's.
    const prefix = fixed && (method === 'GET' || method === 'HEAD') ? this.prefixOf(method, urlJson) : undefined;
    const head = prefix === undefined ? 3 * (this.base.length + method.length + urlJson.length + 16) : prefix.length;
    const variable = head + 3 * ((accountJson?.length ?? 0) + client.length + reqIdJson.length);
    if (!lines.room(FIXED_BYTES + variable))
      return this.tooLong(method, urlJson, status, ms, accountJson, client, reqIdJson);
    lines.bytes(HEAD);
    lines.digits(Date.now());
    if (prefix !== undefined) lines.bytes(prefix);
    else lines.text(`${this.base}${method}","url":${urlJson},"status":`);
    lines.digits(status);
    lines.bytes(MS);
    lines.text(`${ms}`);
    if (accountJson !== undefined) {
      lines.bytes(ACCOUNT);
      lines.text(accountJson);
    }
    lines.bytes(CLIENT);
    lines.text(client);
    lines.bytes(REQ_ID);
    lines.text(reqIdJson);
    lines.bytes(TAIL);
    if (this.eachLine) lines.flush();
  }

  private prefixOf(method: string, urlJson: string): Buffer {
    let byUrl = this.prefixes.get(method);
    if (byUrl === undefined) {
      byUrl = new Map();
      this.prefixes.set(method, byUrl);
    }
    let prefix = byUrl.get(urlJson);
    if (prefix === undefined) {
      prefix = Buffer.from(`${this.base}${method}","url":${urlJson},"status":`);
      byUrl.set(urlJson, prefix);
    }
    return prefix;
  }

  /** A line no buffer holds, as one string written after what is held. */
  private tooLong(
    method: string,
    urlJson: string,
    status: number,
    ms: number,
    accountJson: string | undefined,
    client: string,
    reqIdJson: string,
  ): void {
    const account = accountJson === undefined ? '' : `,"account":${accountJson}`;
    this.lines.passOn(
      Buffer.from(
        `{"level":30,"time":${Date.now()}${this.base}${method}","url":${urlJson},"status":${status},"ms":${ms}` +
          `${account},"client":"${client}","req_id":${reqIdJson},"msg":"request"}\n`,
      ),
    );
  }
}
