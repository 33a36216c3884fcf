import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { crashed, fail, failNotAllowed } from './answer.js';
import { canonicalIp } from './client.js';
import type { Exchange, ListenerCore, Services } from './core-types.js';
import { cors } from './cors.js';
import { buildListenerContext, type PublicDeps } from './listener-context.js';
import { metered } from './metered/index.js';
import { headProblem, parseTarget } from './request.js';
import { requestId } from './request-id.js';
import { routeFor } from './routes.js';

export type { PublicDeps };

/** The public listener's request handler, with its context (everything a request reads) built once. */
export function publicHandler(deps: PublicDeps): ((req: IncomingMessage, res: ServerResponse) => void) & {
  /** Shutdown has begun: every answer from now on closes its connection, and the outage log is closed. */
  drain(): void;
} {
  const { services, core } = buildListenerContext(deps);
  const drain = (): void => {
    core.draining = true;
    core.storeOutage.close();
  };
  return Object.assign((req: IncomingMessage, res: ServerResponse) => handle(services, core, req, res), { drain });
}

/** Whether a request came from one of `server.trusted_proxies` (asked by traces only when on). */
const trustedPeer = (req: IncomingMessage, core: ListenerCore): boolean =>
  core.trustedProxies.size > 0 && core.trustedProxies.has(canonicalIp(req.socket.remoteAddress ?? '') ?? '');

/**
 * The front door: head → target → route → CORS → method, then the metered pipeline
 * (metered/index.ts) or the route's own handler. The core knows no feature: the routes come from the
 * features, through app.ts.
 */
function handle(services: Services, core: ListenerCore, req: IncomingMessage, res: ServerResponse): void {
  const { id, json } = requestId(req, core.trustedProxies);
  const x: Exchange = {
    services,
    core,
    req,
    res,
    start: performance.now(),
    id,
    idJson: json,
    span: core.tracing === null ? null : core.tracing.request(req, () => trustedPeer(req, core)),
    route: core.unmatched,
    account: null,
    address: null,
    loggedUrl: null,
  };
  try {
    const problem = headProblem(req, core.maxHeaders);
    if (problem) return fail(x, problem);
    const target = parseTarget(req.url ?? '');
    if (!target) return fail(x, 'bad_request');
    const entry = routeFor(core, target.path);
    if (!entry) return fail(x, 'not_found');
    x.route = entry;
    if (core.corsOrigins !== null && cors(x, core.corsOrigins)) return;
    const { route } = entry;
    if (route.kind === 'handler' && route.methods !== undefined) {
      if (!route.methods.includes(req.method ?? '')) return failNotAllowed(x, route.methods);
      return route.handle(x, target);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return fail(x, 'method_not_allowed');
    if (route.kind === 'metered') return metered(x, route, target);
    route.handle(x, target);
  } catch (err) {
    crashed(x, err);
  }
}
