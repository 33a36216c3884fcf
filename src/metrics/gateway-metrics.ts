import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { openMetricsText } from './openmetrics.js';
import { Bins, binnedHistogram, requestMetrics } from './request-metrics.js';

const STORE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1];

export type { RouteMetrics } from './request-metrics.js';

/** What became of a Stripe webhook event (docs/billing.md). */
export type StripeEventResult = 'received' | 'applied' | 'ignored_old' | 'duplicate' | 'unmatched' | 'signature_failed';

/**
 * The gateway's Prometheus metrics, in a registry per app (tests run several apps in one
 * process). Per-request metrics are bound once per route (request-metrics.ts).
 */
/** What the gauges read at each scrape. */
export interface MetricSources {
  cacheHitRatio(): number;
  /** Accounts evicted from the in-process cache since start, to make room for others. */
  cacheEvictions(): number;
  snapshotEffectiveMs(): number | null;
  now(): number;
  /** Last successful poll of the origin (ms), or null: none yet, or no upstream. */
  upstreamLastSuccessMs(): Promise<number | null>;
  storeDataLost(): boolean;
  droppedLogLines(): number;
  /** Webhook deliveries pending in the outbox (the deployment's), and when the oldest was created. */
  outbox?(): Promise<{ depth: number; oldestMs: number | null }>;
}

export class Metrics {
  readonly registry = new Registry();
  /** Request count and latency of one route, bound once (request-metrics.ts). */
  readonly forRoute = requestMetrics(this.registry);
  readonly quotaRejections = new Counter({
    name: 'fuel_gateway_quota_rejections_total',
    help: 'Requests refused because the allowance was used up, by plan',
    labelNames: ['plan'],
    registers: [this.registry],
  });
  readonly burstRejections = new Counter({
    name: 'fuel_gateway_burst_rejections_total',
    help: 'Requests refused, not counted, because the account was over its burst limit, by plan',
    labelNames: ['plan'],
    registers: [this.registry],
  });
  readonly invalidKeys = new Counter({
    name: 'fuel_gateway_invalid_key_rejections_total',
    help: 'Requests refused for a missing, malformed or unknown key, or a throttled address',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly storeErrors = new Counter({
    name: 'fuel_gateway_store_errors_total',
    help: 'Metered requests that failed because the store was unreachable or too slow',
    registers: [this.registry],
  });
  readonly unmetered = new Counter({
    name: 'fuel_gateway_unmetered_requests_total',
    help: 'Requests served without counting during a store outage (store.on_error: allow)',
    registers: [this.registry],
  });
  readonly storeLatency = new Bins(STORE_BUCKETS);
  readonly upstreamPolls = new Counter({
    name: 'fuel_gateway_upstream_polls_total',
    help: 'Polls of the origin by result (changed, unchanged, not_modified, or the failure)',
    labelNames: ['result'],
    registers: [this.registry],
  });
  private readonly billingEvents = new Counter({
    name: 'fuel_gateway_billing_events_total',
    help: 'Usage events of the billing exporters by exporter and result: sent (taken by the receiver), failed (refused for good)',
    labelNames: ['exporter', 'result'],
    registers: [this.registry],
  });
  private readonly billingLagSeconds = new Gauge({
    name: 'fuel_gateway_billing_lag_seconds',
    help: 'Age of the oldest usage event an exporter has not yet had taken (0 when none), on the gateway that exports',
    labelNames: ['exporter'],
    registers: [this.registry],
  });
  private readonly stripeEvents = new Counter({
    name: 'fuel_gateway_stripe_events_total',
    help: 'Stripe webhook events by result: received, applied, ignored_old, duplicate, unmatched, signature_failed',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly webhookDeliveries = new Counter({
    name: 'fuel_gateway_webhook_deliveries_total',
    help: 'Webhook delivery attempts by result: delivered, retrying (failed, tried again later), failed (for good)',
    labelNames: ['result'],
    registers: [this.registry],
  });
  private readonly upstreamRequests = new Counter({
    name: 'fuel_gateway_upstream_requests_total',
    help: 'Pass-through requests by proxy_paths entry and origin status (or unreachable, timeout)',
    labelNames: ['route', 'status'],
    registers: [this.registry],
  });
  private readonly upstreamLatency = new Histogram({
    name: 'fuel_gateway_upstream_duration_seconds',
    help: 'Time from forwarding a pass-through request to its answer being written',
    labelNames: ['route'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly cacheAnswers = new Counter({
    name: 'fuel_gateway_cache_answers_total',
    help: 'Pass-through answers by X-Cache: hit, miss, stale (served past freshness) or bypass (not from or into the cache)',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly cacheCoalesced = new Counter({
    name: 'fuel_gateway_cache_coalesced_total',
    help: 'Pass-through requests that waited for an origin request already made for their cache key',
    registers: [this.registry],
  });
  private cacheSource = (): { bytes: number; entries: number } => ({ bytes: 0, entries: 0 });

  constructor(sources: MetricSources) {
    const outbox = async (): Promise<{ depth: number; oldestMs: number | null }> =>
      (await sources.outbox?.().catch(() => null)) ?? { depth: 0, oldestMs: null };
    new Gauge({
      name: 'fuel_gateway_webhook_outbox_depth',
      help: 'Webhook deliveries pending in the outbox, across the deployment',
      registers: [this.registry],
      aggregator: 'max',
      async collect() {
        this.set((await outbox()).depth);
      },
    });
    new Gauge({
      name: 'fuel_gateway_webhook_outbox_oldest_age_seconds',
      help: 'Age of the oldest webhook delivery still pending (0 when none)',
      registers: [this.registry],
      aggregator: 'max',
      async collect() {
        const { oldestMs } = await outbox();
        this.set(oldestMs === null ? 0 : Math.max(0, sources.now() - oldestMs) / 1000);
      },
    });
    binnedHistogram(
      this.registry,
      'fuel_gateway_store_duration_seconds',
      'Latency of the metering store call',
      STORE_BUCKETS,
      [{ labels: {}, bins: this.storeLatency }],
    );
    new Gauge({
      name: 'fuel_gateway_upstream_last_success_timestamp_seconds',
      help: 'When a poll of the origin last succeeded, by whichever instance polls (Unix seconds; 0 when never)',
      registers: [this.registry],
      aggregator: 'max',
      async collect() {
        this.set(((await sources.upstreamLastSuccessMs()) ?? 0) / 1000);
      },
    });
    new Gauge({
      name: 'fuel_gateway_store_data_lost',
      help: '1 once the store was found to have lost its data (Redis restarted empty) since this process started',
      registers: [this.registry],
      aggregator: 'max',
      collect() {
        this.set(sources.storeDataLost() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'fuel_gateway_account_cache_hit_ratio',
      help: 'Share of account lookups answered from the in-process cache since start',
      registers: [this.registry],
      aggregator: 'average',
      collect() {
        this.set(sources.cacheHitRatio());
      },
    });
    new Counter({
      name: 'fuel_gateway_account_cache_evictions_total',
      help: 'Accounts dropped from the in-process cache to make room for others (limits.account_cache.max_entries)',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(sources.cacheEvictions());
      },
    });
    new Gauge({
      name: 'fuel_gateway_price_snapshot_effective_timestamp_seconds',
      help: 'Effective time of the price set being served (Unix seconds; 0 when none)',
      registers: [this.registry],
      aggregator: 'max',
      collect() {
        this.set((sources.snapshotEffectiveMs() ?? 0) / 1000);
      },
    });
    new Gauge({
      name: 'fuel_gateway_price_snapshot_age_seconds',
      help: 'Seconds since the price set being served took effect',
      registers: [this.registry],
      aggregator: 'min',
      collect() {
        const at = sources.snapshotEffectiveMs();
        // 0 while a set served ahead of its date (an origin's) has not reached it, as /readyz says.
        this.set(at === null ? 0 : Math.max(0, sources.now() - at) / 1000);
      },
    });
    new Counter({
      name: 'fuel_gateway_log_lines_dropped_total',
      help: 'Log lines dropped because stdout could not take them (log.max_buffer_bytes)',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(sources.droppedLogLines());
      },
    });
    this.cacheGauges();
    collectDefaultMetrics({ register: this.registry, prefix: 'fuel_gateway_' });
  }

  private cacheGauges(): void {
    const cache = (): { bytes: number; entries: number } => this.cacheSource();
    new Gauge({
      name: 'fuel_gateway_cache_bytes',
      help: 'Bytes held by the pass-through cache, as counted against upstream.cache.max_bytes',
      registers: [this.registry],
      collect() {
        this.set(cache().bytes);
      },
    });
    new Gauge({
      name: 'fuel_gateway_cache_entries',
      help: 'Answers held by the pass-through cache',
      registers: [this.registry],
      collect() {
        this.set(cache().entries);
      },
    });
  }

  observeUpstream(route: string, status: string, seconds: number): void {
    this.upstreamRequests.labels(route, status).inc();
    this.upstreamLatency.labels(route).observe(seconds);
  }

  /** The pass-through cache's size, read at each scrape. */
  billingSent(exporter: string, events: number): void {
    this.billingEvents.inc({ exporter, result: 'sent' }, events);
  }

  billingFailed(exporter: string, events: number): void {
    this.billingEvents.inc({ exporter, result: 'failed' }, events);
  }

  stripe(result: StripeEventResult): void {
    this.stripeEvents.inc({ result });
  }

  billingLag(exporter: string, seconds: number): void {
    this.billingLagSeconds.set({ exporter }, seconds);
  }

  cacheHeld(source: () => { bytes: number; entries: number }): void {
    this.cacheSource = source;
  }

  /** Prometheus text: this process's registry, or every worker's once `clusterWide` is called. */
  text(): Promise<string> {
    return this.source();
  }

  /**
   * The OpenMetrics format, with exemplars (openmetrics.ts); null in a cluster worker, whose
   * /metrics sums every worker's in the Prometheus format, which carries no exemplar.
   */
  openMetrics(): Promise<string> | null {
    return this.clustered ? null : openMetricsText(this.registry);
  }

  /** In a cluster worker: /metrics answers for all workers (cluster/cluster-metrics.ts). */
  clusterWide(source: () => Promise<string>): void {
    this.source = source;
    this.clustered = true;
  }

  private source = (): Promise<string> => this.registry.metrics();
  private clustered = false;
}
