import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Config } from '../config/config-schema.js';
import type { RequestSpan } from '../telemetry/tracing.js';

export type UpstreamConfig = Config['upstream'];

/**
 * A pool of kept-alive connections to the origin, bounded so a burst of clients cannot open
 * unbounded sockets to it. Polls have a pool of their own, so client traffic never starves them.
 */
export function createOriginAgent(cfg: UpstreamConfig, maxSockets: number): HttpAgent {
  const options = { keepAlive: true, maxSockets, maxFreeSockets: maxSockets, timeout: cfg.timeout_ms * 2 };
  return cfg.url.startsWith('https:') ? new HttpsAgent(options) : new HttpAgent(options);
}

/** The origin's base URL without a trailing slash, so `base + '/fuel-api/…'` is one path. */
export const originBase = (cfg: UpstreamConfig): string => cfg.url.replace(/\/+$/, '');

export interface OriginAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Why an origin request got no answer. */
export class OriginFailure extends Error {
  constructor(
    readonly reason: 'timeout' | 'unreachable' | 'too_large',
    message: string,
  ) {
    super(message);
  }
}

/**
 * One GET to the origin with the whole answer read into memory (bounded): for polls. The
 * timeout covers the whole exchange, not only the wait for headers. `pathAndQuery` may hold
 * the service key: it never goes into an error message.
 */
export function getFromOrigin(
  cfg: UpstreamConfig,
  agent: HttpAgent,
  pathAndQuery: string,
  headers: Record<string, string>,
  maxBytes = 1 << 20,
  span: Pick<RequestSpan, 'originTry'> | null = null,
): Promise<OriginAnswer> {
  const url = new URL(originBase(cfg) + pathAndQuery);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, {
      method: 'GET',
      agent,
      headers: { accept: 'application/json', 'accept-encoding': 'identity', ...headers },
    });
    // Its URL without the query, which carries the service key.
    const origin = span?.originTry(req, `${url.origin}${url.pathname}`);
    // Rejects by itself: a request still queued for a socket emits no error when destroyed.
    const timer = setTimeout(() => {
      reject(new OriginFailure('timeout', `no answer within ${cfg.timeout_ms} ms`));
      origin?.end(0, 'timeout');
      req.destroy();
    }, cfg.timeout_ms);
    req.on('error', (err) => {
      clearTimeout(timer);
      origin?.end(0, err instanceof OriginFailure ? err.reason : 'unreachable');
      reject(
        err instanceof OriginFailure
          ? err
          : new OriginFailure('unreachable', (err as NodeJS.ErrnoException).code ?? err.message),
      );
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBytes)
          return void req.destroy(new OriginFailure('too_large', `answer larger than ${maxBytes} bytes`));
        chunks.push(c);
      });
      res.on('end', () => {
        clearTimeout(timer);
        origin?.end(res.statusCode ?? 0);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err instanceof OriginFailure ? err : new OriginFailure('unreachable', `answer cut off: ${err.message}`));
      });
    });
    req.end();
  });
}
