import pino, { type Logger } from 'pino';
import { BASE, type ScrubbedStream } from './logger.js';

/**
 * The access log: one line per answer, in the shape pino writes (level, time, base fields, msg),
 * straight to the logger's destination. pino's own serialisation of these fields costs more per
 * line, and much more with the redaction the app log needs (docs/performance.md). No field can hold
 * a key: the URL is scrubbed and redacted before it comes here (`accessUrl`, http/request.ts), and the rest are a method token,
 * numbers, an account id, an IP address and the request id. URL, account id and request id arrive JSON-encoded, so that callers
 * can encode them once (per route, per cached account) rather than per line.
 */
export class AccessLog {
  private readonly stream: pino.DestinationStream;
  private readonly base = `,${JSON.stringify(BASE).slice(1, -1)},"method":"`;

  constructor(log: Logger) {
    const stream = Reflect.get(log, pino.symbols.streamSym) as ScrubbedStream;
    this.stream = stream.raw ?? stream;
  }

  /** `accountJson` is undefined before the key is known to belong to one. */
  write(
    method: string,
    urlJson: string,
    status: number,
    ms: number,
    accountJson: string | undefined,
    client: string,
    reqIdJson: string,
  ): void {
    this.stream.write(
      `{"level":30,"time":${Date.now()}${this.base}${method}","url":${urlJson},"status":${status},"ms":${ms}` +
        `${accountJson === undefined ? '' : `,"account":${accountJson}`},"client":"${client}","req_id":${reqIdJson},"msg":"request"}\n`,
    );
  }
}
