import type { IncomingMessage, ServerResponse } from 'node:http';
import { crashed, fail, failNotAllowed } from './answer.js';
import { buildGateway, type PublicDeps } from './context.js';
import type { Gateway } from './core-types.js';
import { cors } from './cors.js';
import { metered, RequestExchange } from './metered.js';
import { headProblem } from './public-server.js';
import { parseTarget } from './request.js';
import { routeFor } from './routes.js';

export type { PublicDeps };

/** The public listener's request handler, with its Gateway (everything a request reads) built once. */
export function publicHandler(
  deps: PublicDeps,
): ((req: IncomingMessage, res: ServerResponse) => void) & { gateway: Gateway } {
  const g = buildGateway(deps);
  return Object.assign((req: IncomingMessage, res: ServerResponse) => handle(g, req, res), { gateway: g });
}

/**
 * Head → target → route → CORS → method, then the metered pipeline (metered.ts) or the route's
 * own handler. The core knows no feature: the routes come from the features, through app.ts.
 */
export function handle(g: Gateway, req: IncomingMessage, res: ServerResponse): void {
  const x = new RequestExchange(g, req, res);
  try {
    const problem = headProblem(req, g.maxHeaders);
    if (problem) return fail(x, problem);
    const target = parseTarget(req.url ?? '');
    if (!target) return fail(x, 'bad_request');
    const entry = routeFor(g, target.path);
    if (!entry) return fail(x, 'not_found');
    x.route = entry;
    x.metrics = entry.metrics;
    if (g.corsOrigins !== null && cors(x, g.corsOrigins)) return;
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
