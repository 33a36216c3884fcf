/**
 * Health: /healthz (the process runs) and /readyz (the store answers and a price set is in
 * effect, with the origin's state when there is one), for balancers and orchestrators. Unmetered.
 */
import { performance } from 'node:perf_hooks';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config/config-schema.js';
import type { Exchange, RouteDef, Services } from '../../http/core-types.js';
import { crashed, send } from '../../http/metered/pipeline.js';
import { jsonOk, PUBLIC } from '../../http/openapi.js';
import { priceAge } from '../../prices/staleness.js';
import type { UpstreamPoller } from '../../upstream/poller.js';

const READY_TTL_MS = 1000;
const JSON_TYPE = 'application/json';
const HEALTHY = '{"status":"ok"}';

export interface HealthDeps {
  /** Whether the store answers. */
  storeReady(): Promise<boolean>;
  /** The origin's poller; null without an upstream. */
  upstream: UpstreamPoller | null;
}

export function healthRoutes(config: Config, deps: HealthDeps): RouteDef[] {
  const readiness = new Readiness(config, deps);
  return [
    {
      path: '/healthz',
      route: {
        kind: 'handler',
        name: 'healthz',
        handle: (x) => send(x, 200, x.services.headers.unrated(JSON_TYPE, HEALTHY.length), HEALTHY),
      },
      openapi: {
        get: {
          operationId: 'getHealth',
          tags: ['Health'],
          security: PUBLIC,
          summary: 'Liveness',
          responses: { 200: jsonOk('The process runs.', 'Health', false) },
        },
      },
    },
    {
      path: '/readyz',
      route: {
        kind: 'handler',
        name: 'readyz',
        handle: (x) => void readiness.answer(x).catch((err: unknown) => crashed(x, err)),
      },
      openapi: {
        get: {
          operationId: 'getReadiness',
          tags: ['Health'],
          security: PUBLIC,
          summary: 'Readiness',
          responses: {
            200: jsonOk('The store answers and a price set is in effect.', 'Ready', false),
            503: jsonOk('Not ready: see the fields.', 'Ready', false),
          },
        },
      },
    },
  ];
}

class Readiness {
  /** `prices.max_age_days` and `prices.stale_is_unready`. */
  private readonly staleness: { maxAgeDays: number; unready: boolean };
  /** The last store check, reused for a second. */
  private storeCheck: { at: number; up: boolean } | null = null;

  constructor(
    config: Config,
    private readonly deps: HealthDeps,
  ) {
    this.staleness = { maxAgeDays: config.prices.max_age_days, unready: config.prices.stale_is_unready };
  }

  async answer(x: Exchange): Promise<void> {
    const { book, clock, headers, storeReady, storeDataLost } = x.services;
    const current = book.current();
    const store = await this.storeUp(storeReady);
    const age = priceAge(book, this.staleness.maxAgeDays, clock.now());
    const status = current && store && !(age?.stale && this.staleness.unready) ? 200 : 503;
    const poller = this.deps.upstream;
    const upstream = poller && (await upstreamView(clock, poller, current?.set.effective_date ?? null));
    const body = JSON.stringify({
      ready: status === 200,
      store,
      prices: current !== null,
      ...(storeDataLost() && { store_data_lost: true }),
      ...age,
      ...(upstream && { upstream }),
    });
    send(x, status, headers.unrated(JSON_TYPE, Buffer.byteLength(body)), body);
  }

  /**
   * Readiness probes arrive from every balancer and orchestrator: ask the store at most once a
   * second. Not ready while requests have failed for the store recently (the core says so).
   */
  private async storeUp(storeReady: Services['storeReady']): Promise<boolean> {
    if (!storeReady()) return false;
    const now = performance.now();
    if (this.storeCheck && now - this.storeCheck.at < READY_TTL_MS) return this.storeCheck.up;
    const up = await this.deps.storeReady();
    this.storeCheck = { at: performance.now(), up };
    return up;
  }
}
/** The origin as /readyz reports it: who polls, how the last poll went, and how long ago prices were confirmed. */
async function upstreamView(
  clock: Clock,
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
    snapshot_age_s: last === null ? null : Math.max(0, Math.round((clock.now() - last) / 1000)),
    effective_date: effectiveDate,
  };
}
