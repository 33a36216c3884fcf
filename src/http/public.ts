import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config/schema.js';
import { isGatewayError } from '../errors.js';
import { hashKey, isWellFormedKey } from '../keys/keys.js';
import type { InvalidKeyThrottle } from '../keys/throttle.js';
import type { PriceBook } from '../prices/book.js';
import type { CountedResult, Meter } from '../quota/meter.js';
import { usageJson } from '../quota/usage.js';
import { buildErrorAnswers, type ErrorKind } from './errors.js';
import { parseTarget, readKey, redactUrl } from './request.js';
import { ALLOWED_METHODS, buildRoutes, type Prepared, type Route } from './routes.js';

export interface PublicDeps {
  config: Config;
  meter: Meter;
  book: PriceBook;
  throttle: InvalidKeyThrottle;
  clock: Clock;
  log: Logger;
  /** Whether the store answers; for /readyz. */
  storeReady(): Promise<boolean>;
}

type Headers = Array<string | number>;

const BASE_HEADERS: Headers = ['Cache-Control', 'no-store', 'X-Content-Type-Options', 'nosniff'];

/**
 * The public listener's request handler: route → key → meter → answer. Expected outcomes
 * (unknown key, inactive, exhausted) are values mapped to the error table in one place (`fail`);
 * only store failures and bugs are exceptions.
 */
export function publicHandler(deps: PublicDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { config, meter, book, throttle, clock, log } = deps;
  const routes = buildRoutes(config);
  const errors = buildErrorAnswers(config.messages);
  const maxKeyLength = config.limits.max_key_length;
  const access = config.log.access;

  function send(req: IncomingMessage, res: ServerResponse, status: number, headers: Headers, body: string): void {
    const length = Buffer.byteLength(body);
    res.writeHead(status, [...BASE_HEADERS, 'Content-Length', length, ...headers]);
    res.end(req.method === 'HEAD' ? undefined : body);
    if (access) log.info({ method: req.method, url: redactUrl(req.url ?? ''), status }, 'request');
  }

  function fail(req: IncomingMessage, res: ServerResponse, kind: ErrorKind, headers: Headers = []): void {
    const e = errors[kind];
    send(req, res, e.status, ['Content-Type', 'application/json', ...headers], e.body);
  }

  function rateHeaders(r: CountedResult): Headers {
    const { limit, period } = r.entry.allowance;
    return [
      'X-RateLimit-Limit', limit,
      'X-RateLimit-Remaining', Math.max(0, limit - r.used),
      'X-RateLimit-Reset', Math.ceil(period.endMs / 1000),
    ];
  }

  async function metered(req: IncomingMessage, res: ServerResponse, route: Route & { kind: 'metered' }, query: URLSearchParams): Promise<void> {
    const address = req.socket.remoteAddress ?? '';
    const blockedMs = throttle.blockedFor(address);
    if (blockedMs > 0) return fail(req, res, 'throttled', ['Retry-After', Math.ceil(blockedMs / 1000)]);
    const input = readKey(req, query, maxKeyLength);
    if (input.kind === 'missing') return fail(req, res, 'missing_key');
    if (input.kind === 'malformed' || !isWellFormedKey(input.key)) {
      throttle.fail(address);
      return fail(req, res, 'invalid_key');
    }
    const snapshot = book.current();
    if (!snapshot) return fail(req, res, 'unavailable', ['Retry-After', 1]);
    const prepared = route.prepare(query, snapshot);
    if (typeof prepared === 'string') return fail(req, res, prepared);

    const keyHash = hashKey(input.key);
    const result = req.method === 'HEAD' ? await meter.peek(keyHash) : await meter.consume(keyHash);
    switch (result.kind) {
      case 'unknown':
        throttle.fail(address);
        return fail(req, res, 'invalid_key');
      case 'inactive':
        return fail(req, res, 'inactive_key');
      case 'exhausted': {
        const { period } = result.entry.allowance;
        const retryAfter = Math.max(1, Math.ceil((period.endMs - clock.now()) / 1000));
        return fail(req, res, period.kind === 'trial' ? 'limit_trial' : 'limit_monthly', ['Retry-After', retryAfter, ...rateHeaders(result)]);
      }
      case 'ok':
        return succeed(req, res, prepared, result);
    }
  }

  function succeed(req: IncomingMessage, res: ServerResponse, p: Prepared, r: CountedResult): void {
    const body = p.withUsage ? p.head + usageJson(r.entry.usage, r.used, r.entry.allowance.limit) + p.tail : p.head + p.tail;
    send(req, res, 200, ['Content-Type', p.contentType, ...rateHeaders(r)], body);
  }

  async function ready(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const prices = book.current() !== null;
    const store = await deps.storeReady();
    const status = prices && store ? 200 : 503;
    send(req, res, status, ['Content-Type', 'application/json'], JSON.stringify({ ready: status === 200, store, prices }));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = parseTarget(req.url ?? '');
    if (!target) return fail(req, res, 'bad_request');
    const route = routes.get(target.path);
    if (!route) return fail(req, res, 'not_found');
    if (req.method !== 'GET' && req.method !== 'HEAD') return fail(req, res, 'method_not_allowed', ['Allow', ALLOWED_METHODS]);
    if (route.kind === 'health') return send(req, res, 200, ['Content-Type', 'application/json'], '{"status":"ok"}');
    if (route.kind === 'ready') return ready(req, res);
    return metered(req, res, route, target.query);
  }

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      const unavailable = isGatewayError(err, 'STORE_UNAVAILABLE');
      log[unavailable ? 'warn' : 'error']({ err, url: redactUrl(req.url ?? '') }, unavailable ? 'store unavailable' : 'request failed');
      if (res.headersSent) return void res.destroy();
      if (unavailable) fail(req, res, 'unavailable', ['Retry-After', 1]);
      else fail(req, res, 'internal');
    });
  };
}
