import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { FAILURE_STATUS, GatewayError, isGatewayError } from '../failures.js';
import { canonicalIp } from '../http/client.js';
import { headProblem } from '../http/request.js';
import type { Metrics } from '../metrics/gateway-metrics.js';
import { OPENMETRICS_TYPE } from '../metrics/openmetrics.js';
import { browserProblem, hasBody, readJson } from './admin-request.js';
import type { AdminOperation } from './command-table.js';
import { adminRoutes } from './commands.js';
import { queryRecord } from './list-query.js';
import type { Operations } from './operations.js';
import { runOperation } from './run-operation.js';
import { isExport, type UsageExport } from './usage-export.js';

/** The JSON body the operation reads; none is read for one that reads none. */
function bodyOf(req: IncomingMessage, operation: AdminOperation<unknown, unknown>): Promise<unknown> {
  if (operation.body === 'json' || (operation.body === 'optional' && hasBody(req))) return readJson(req);
  return Promise.resolve(undefined);
}

const BEARER = /^bearer +(.+)$/i;
const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

// Without a token, only requests addressed to a loopback name are served: a web page the
// operator visits cannot reach the admin API by rebinding its own domain to 127.0.0.1.
const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?$/i;
function reply(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, {
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(body);
}

function failure(res: ServerResponse, err: GatewayError): void {
  if (err.code === 'PAYLOAD_TOO_LARGE') res.setHeader('Connection', 'close');
  reply(
    res,
    FAILURE_STATUS[err.code],
    JSON.stringify({
      ...err.fields,
      success: false,
      code: err.code,
      message: err.message,
      // Every 400 says what is wrong with which field, even when there is one thing.
      ...(FAILURE_STATUS[err.code] === 400 && { problems: err.details.length > 0 ? err.details : [err.message] }),
    }),
  );
}

/** An export: headers now, rows as they are read (chunked); a failure half-way cuts the answer short. */
async function stream(res: ServerResponse, e: UsageExport): Promise<void> {
  res.writeHead(200, {
    'Content-Type': e.contentType,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    // The name is dates only (validated), so it needs no quoting beyond the quotes.
    ...(e.filename !== null && { 'Content-Disposition': `attachment; filename="${e.filename}"` }),
  });
  await e.writeTo(res);
  res.end();
}

/**
 * The admin listener's handler: bearer token (compared in constant time), a small route table
 * over the shared operations, and JSON bodies bounded in size. Never bound on the public port.
 */
export function adminHandler(
  ops: Operations,
  metrics: Metrics,
  token: string,
  log: Logger,
  maxHeaders: number,
): (req: IncomingMessage, res: ServerResponse) => void {
  const expected = token ? digest(token) : null;
  const routes = adminRoutes();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const problem = headProblem(req, maxHeaders);
    if (problem === 'headers_too_large')
      return failure(res, new GatewayError('HEADERS_TOO_LARGE', `more than ${maxHeaders} header fields`));
    if (problem) return failure(res, new GatewayError('BAD_REQUEST', 'Host: expected exactly one Host header'));
    if (!expected && !LOOPBACK_HOST.test(req.headers.host ?? '')) {
      return failure(
        res,
        new GatewayError('UNAUTHORIZED', 'without an admin token, only requests to localhost are served'),
      );
    }
    const fromBrowser = expected ? null : browserProblem(req);
    if (fromBrowser) return failure(res, fromBrowser);
    if (expected) {
      // The scheme name is case-insensitive (RFC 9110 11.1).
      const given = digest(BEARER.exec(req.headers.authorization ?? '')?.[1] ?? '');
      if (!timingSafeEqual(given, expected)) {
        res.setHeader('WWW-Authenticate', 'Bearer');
        return failure(res, new GatewayError('UNAUTHORIZED', 'missing or wrong bearer token'));
      }
    }
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (path === '/metrics' && req.method === 'GET') {
      const open = (req.headers.accept ?? '').includes('application/openmetrics-text') ? metrics.openMetrics() : null;
      if (open !== null) return reply(res, 200, await open, OPENMETRICS_TYPE);
      return reply(res, 200, await metrics.text(), metrics.registry.contentType);
    }
    const matching = routes.map((r) => ({ r, m: r.pattern.exec(path) })).filter((x) => x.m !== null);
    if (matching.length === 0) return failure(res, new GatewayError('NOT_FOUND', `no admin route ${path}`));
    const hit = matching.find((x) => x.r.operation.method === req.method);
    if (!hit) {
      res.setHeader('Allow', matching.map((x) => x.r.operation.method).join(', '));
      return failure(res, new GatewayError('METHOD_NOT_ALLOWED', `${req.method} not allowed on ${path}`));
    }
    const { operation } = hit.r;
    const answer = await runOperation(ops, operation, {
      ids: (hit.m as RegExpExecArray).slice(1),
      body: await bodyOf(req, operation),
      query: queryRecord(new URLSearchParams(q === -1 ? '' : url.slice(q + 1))),
      // The admin port is reached directly (never through the balancer), so the peer is who asks.
      from: canonicalIp(req.socket.remoteAddress ?? '') ?? 'unknown',
    });
    if (isExport(answer)) return stream(res, answer);
    if (operation.status === 204) {
      res.writeHead(204, { 'Cache-Control': 'no-store' });
      return void res.end();
    }
    reply(res, operation.status, JSON.stringify(answer));
  }

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      if (isGatewayError(err)) return failure(res, err);
      log.error({ err }, 'admin request failed');
      failure(res, new GatewayError('INTERNAL', 'internal error'));
    });
  };
}
