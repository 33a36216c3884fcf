import { proxyPathMatches } from '../config/upstream.js';
import type { Metrics } from '../metrics/gateway-metrics.js';
import type { Gateway, Route, RouteDef, RouteEntry } from './core-types.js';
import { accessUrl, PLAIN_KEY_PARAM } from './request.js';

/**
 * The only table of public paths, from the routes the features handed over: exact paths looked
 * up exactly, then pattern routes in order. A pattern takes every exact path it covers (the
 * config refuses a pass-through entry that would take a current endpoint or a probe; one that
 * covers historical.php takes it, so the origin's history is served instead of ours). A route
 * that is only described (`route: null`) is not served.
 */
export function routeTable(
  defs: readonly RouteDef[],
  metrics: Metrics,
): { routes: Map<string, RouteEntry>; patterns: RouteEntry[] } {
  const served = defs.filter((d): d is RouteDef & { route: Route } => d.route !== null);
  const patternDefs = served.filter((d) => d.pattern);
  const routes = new Map<string, RouteEntry>();
  for (const { path, pattern, route } of served) {
    if (pattern || patternDefs.some((p) => proxyPathMatches(p.path, path))) continue;
    routes.set(path, {
      path,
      route,
      metrics: metrics.forRoute(route.name),
      // The line a plain-key request would get, made by the same redaction.
      plainKeyUrl: accessUrl(`${path}?${PLAIN_KEY_PARAM}K`),
    });
  }
  const patterns = patternDefs.map(({ path, route }) => ({
    path,
    route,
    metrics: metrics.forRoute(route.name),
    plainKeyUrl: null,
  }));
  return { routes, patterns };
}

/** The route of a path: exact first, else the first pattern that matches. */
export const routeFor = (g: Gateway, path: string): RouteEntry | undefined =>
  g.routes.get(path) ?? g.patterns.find((e) => proxyPathMatches(e.path, path));
