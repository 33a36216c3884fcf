import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { proxied } from '../features/pass-through/proxied.js';
import { usageCheck } from '../features/usage/check.js';
import { priceAge } from '../prices/staleness.js';
import type { UpstreamPoller } from '../upstream/poller.js';
import { crashed, fail, send } from './answer.js';
import { buildGateway, type Gateway, type PublicDeps, routeFor } from './context.js';
import { cors } from './cors.js';
import { Exchange, metered } from './metered.js';
import { parseTarget } from './request.js';
import { headProblem } from './server.js';

export type { PublicDeps };

const READY_TTL_MS = 1000;
// A store whose last request failed this recently is not ready, whatever its PING says (Redis
// out of memory answers PING and refuses every write).
const STORE_ERROR_UNREADY_MS = 5000;
const JSON_TYPE = 'application/json';
const HEALTHY = '{"status":"ok"}';

/** The public listener's request handler, with its Gateway (everything a request reads) built once. */
export function publicHandler(
  deps: PublicDeps,
): ((req: IncomingMessage, res: ServerResponse) => void) & { gateway: Gateway } {
  const g = buildGateway(deps);
  return Object.assign((req: IncomingMessage, res: ServerResponse) => handle(g, req, res), { gateway: g });
}

/** Route → method → health, readiness or the metered path (metered.ts). */
export function handle(g: Gateway, req: IncomingMessage, res: ServerResponse): void {
  const x = new Exchange(g, req, res);
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
    if (req.method !== 'GET' && req.method !== 'HEAD') return fail(x, 'method_not_allowed');
    const { route } = entry;
    if (route.kind === 'metered') return metered(x, route, target.search);
    if (route.kind === 'health') return send(x, 200, g.answers.unrated(JSON_TYPE, HEALTHY.length), HEALTHY);
    if (route.kind === 'ready') return void ready(x).catch((err: unknown) => crashed(x, err));
    if (route.kind === 'proxy') return proxied(x, route, target);
    if (route.kind === 'usage') return usageCheck(x, target.search);
    const { headers, body } = route.kind === 'page' ? route.page.render(g.book.snapshot()) : route.answer;
    send(x, 200, headers, body);
  } catch (err) {
    crashed(x, err);
  }
}

/**
 * Readiness probes arrive from every balancer and orchestrator: ask the store at most once a
 * second. Not ready while requests have failed for the store recently.
 */
async function storeUp(g: Gateway): Promise<boolean> {
  const now = performance.now();
  if (now - g.storeFailedAt < STORE_ERROR_UNREADY_MS) return false;
  if (g.storeCheck && now - g.storeCheck.at < READY_TTL_MS) return g.storeCheck.up;
  const up = await g.storeReady();
  g.storeCheck = { at: performance.now(), up };
  return up;
}

async function ready(x: Exchange): Promise<void> {
  const { g } = x;
  const current = g.book.current();
  const store = await storeUp(g);
  const age = priceAge(g.book, g.staleness.maxAgeDays, g.clock.now());
  const status = current && store && !(age?.stale && g.staleness.unready) ? 200 : 503;
  const upstream = g.upstream && (await upstreamView(g, g.upstream, current?.set.effective_date ?? null));
  const body = JSON.stringify({
    ready: status === 200,
    store,
    prices: current !== null,
    ...(g.storeDataLost() && { store_data_lost: true }),
    ...age,
    ...(upstream && { upstream }),
  });
  send(x, status, g.answers.unrated(JSON_TYPE, Buffer.byteLength(body)), body);
}

/** The origin as /readyz reports it: who polls, how the last poll went, and how long ago prices were confirmed. */
async function upstreamView(
  g: Gateway,
  poller: UpstreamPoller,
  effectiveDate: string | null,
): Promise<Record<string, unknown>> {
  const { role, status } = await poller.view();
  const last = status?.last_success_ms ?? null;
  return {
    role,
    state: status?.state ?? 'waiting',
    reason: status?.reason ?? null,
    last_success_at: last === null ? null : new Date(last).toISOString(),
    snapshot_age_s: last === null ? null : Math.max(0, Math.round((g.clock.now() - last) / 1000)),
    effective_date: effectiveDate,
  };
}
