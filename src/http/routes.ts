import { proxyPathMatches } from '../config/upstream.js';
import { SCOPE_BIT } from '../keys/gate.js';
import type { Metrics } from '../metrics/gateway-metrics.js';
import type { ListenerCore, Route, RouteDef, RouteEntry } from './core-types.js';
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
  for (const def of served) {
    const { path, pattern } = def;
    if (pattern || patternDefs.some((p) => proxyPathMatches(p.path, path))) continue;
    // The line a plain-key request would get, made by the same redaction.
    routes.set(path, entry(def, metrics, accessUrl(`${path}?${PLAIN_KEY_PARAM}K`)));
  }
  const patterns = patternDefs.map((def) => entry(def, metrics, null));
  return { routes, patterns };
}

/** A route's context, built once: every request on it reads these and changes none. */
const entry = (
  { path, route, scope }: RouteDef & { route: Route },
  metrics: Metrics,
  plainKeyUrl: string | null,
): RouteEntry => ({
  path,
  route,
  metrics: metrics.forRoute(route.name),
  plainKeyUrl,
  keyHeader: route.kind === 'metered' ? route.keyHeader : undefined,
  scope: scope === undefined ? 0 : SCOPE_BIT[scope],
});

/** The route of a path: exact first, else the first pattern that matches. */
export const routeFor = (l: ListenerCore, path: string): RouteEntry | undefined =>
  l.routes.get(path) ?? l.patterns.find((e) => proxyPathMatches(e.path, path));
