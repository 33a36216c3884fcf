/**
 * The answer (status, headers and bytes sent to the client) and its record: every step that
 * ends a request ends it here, and nothing here calls back into a step.
 */
import { performance } from 'node:perf_hooks';
import type { RequestSpan } from '../telemetry/tracing.js';
import { canonicalIp, connectionClient } from './client.js';
import type { Exchange, RouteEntry } from './core-types.js';
import { ERROR_STATUS, type ErrorKind, referencedBody } from './error-kinds.js';
import { warnOfExpiry } from './key-check.js';
import { accessUrl, logUrl } from './request.js';
import { REQUEST_ID_HEADER } from './request-id.js';
import { ALLOWED_METHODS, type HeaderList, write } from './response-headers.js';

/**
 * Sends an answer and accounts for it: metrics, then the access log line (account id and
 * client address, never the key; the URL with `api_key` redacted).
 */
export function send(x: Exchange, status: number, headers: HeaderList, body: string | Buffer): void {
  const { core, req, res } = x;
  // Draining for shutdown: this answer closes its connection, so the client sends nothing more on it.
  if (core.draining) res.setHeader('Connection', 'close');
  warnOfExpiry(x);
  // A feature that writes its answer elsewhere (the pass-through) has set the id on `res` itself.
  write(res, req.method === 'HEAD', status, headers, body, res.hasHeader(REQUEST_ID_HEADER) ? null : x.id);
  record(x, status);
}

/** Metrics and the access log line of an answer written elsewhere (status 0: none was written, or a pass-through cut and not counted). */
export function record(x: Exchange, status: number): void {
  const { core, req } = x;
  const seconds = (performance.now() - x.start) / 1000;
  x.route.metrics.observe(status, seconds);
  core.access?.write(
    req.method ?? '',
    x.loggedUrl ?? accessUrl(req.url ?? ''),
    x.loggedUrl !== null,
    status,
    Math.round(seconds * 1e4) / 10,
    x.account?.idJson,
    clientOf(x),
    x.idJson,
  );
  if (x.span === null) return;
  endSpan(x, x.span, status);
  if (core.tracing?.exemplars) x.route.metrics.latency.exemplar(seconds, x.span.traceId);
}

function endSpan(x: Exchange, span: RequestSpan, status: number): void {
  const cache = x.res.getHeader('x-cache');
  span.end({
    method: x.req.method ?? '',
    route: x.route === x.core.unmatched ? null : (x.route as RouteEntry).path,
    path: pathOf(x.req.url ?? ''),
    status,
    client: clientOf(x),
    plan: x.account?.account.plan ?? null,
    cache: typeof cache === 'string' ? cache : null,
  });
}

const pathOf = (url: string): string => {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
};

export function fail(x: Exchange, kind: ErrorKind): void {
  const { headers } = x.services;
  if (x.span !== null) x.span.outcome = kind;
  if (ERROR_STATUS[kind] >= 500) return sendReferenced(x, kind, headers.error(kind));
  send(x, ERROR_STATUS[kind], headers.error(kind), headers.errors[kind].body);
}

/**
 * A 5xx error answer: its body gives the request id as `ref`, for the client to quote. Rare, so
 * the body and a copy of the header list are made per answer.
 */
function sendReferenced(x: Exchange, kind: ErrorKind, list: HeaderList): void {
  const body = referencedBody(x.services.headers.errors[kind].body, x.idJson);
  const headers = list.slice();
  headers[headers.indexOf('Content-Length') + 1] = Buffer.byteLength(body);
  send(x, ERROR_STATUS[kind], headers, body);
}

/** 405 on a route that answers other methods than GET and HEAD: its `Allow` names them. */
export function failNotAllowed(x: Exchange, methods: readonly string[]): void {
  const { headers } = x.services;
  const list = headers.error('method_not_allowed').map((v) => (v === ALLOWED_METHODS ? methods.join(', ') : v));
  send(x, ERROR_STATUS.method_not_allowed, list, headers.errors.method_not_allowed.body);
}

/** An error answer with `Retry-After` (throttled, unavailable). */
export function failRetry(x: Exchange, kind: ErrorKind, seconds: number): void {
  const { headers } = x.services;
  if (x.span !== null) x.span.outcome = kind;
  if (ERROR_STATUS[kind] >= 500) return sendReferenced(x, kind, headers.errorRetry(kind, seconds));
  send(x, ERROR_STATUS[kind], headers.errorRetry(kind, seconds), headers.errors[kind].body);
}

/** A bug or an unexpected failure: logged, answered 500 (or the connection dropped when the answer had begun). */
export function crashed(x: Exchange, err: unknown): void {
  x.services.log.error({ err, url: logUrl(x.req.url ?? ''), req_id: x.id }, 'request failed');
  if (x.res.headersSent) return void x.res.destroy();
  fail(x, 'internal');
}

/** The client address as the throttle and the access log see it, worked out once per request. */
export function clientOf(x: Exchange): string {
  x.address ??= connectionClient(x.req, x.core.trustedProxies);
  return x.address;
}

/**
 * Whether the client's request came over TLS: to this listener, or to a trusted proxy that says
 * so in `X-Forwarded-Proto` (a cookie is `Secure` then).
 */
export function overTls(x: Exchange): boolean {
  const { req } = x;
  if ((req.socket as { encrypted?: boolean }).encrypted === true) return true;
  const proto = req.headers['x-forwarded-proto'];
  return viaTrustedProxy(x) && typeof proto === 'string' && proto.split(',')[0]?.trim() === 'https';
}

/** Whether the connection's peer is one of `server.trusted_proxies` (its `Host` may be the proxy's choice). */
export const viaTrustedProxy = (x: Exchange): boolean =>
  x.core.trustedProxies.has(canonicalIp(x.req.socket.remoteAddress ?? '') ?? '');
