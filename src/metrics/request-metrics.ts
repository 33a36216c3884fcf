import { Counter, type Histogram, type Registry } from 'prom-client';

const STATUSES = 600;

/**
 * Observations of one histogram series as plain numbers: a request costs a few additions, where
 * prom-client's histograms hash their labels on every call (with the request counter, a
 * measurable part of a request: docs/performance.md). prom-client reads them when scraped.
 */
export class Bins {
  /** Per bucket, not cumulative; the last one is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  /** Per bucket, its last sampled request (`telemetry.exemplars`); null until the first. */
  exemplars: Array<Exemplar | undefined> | null = null;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(seconds: number): void {
    const i = this.bucketOf(seconds);
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += seconds;
    this.count++;
  }

  /** A sampled request's trace, kept on the bucket it was counted in (after `observe`). */
  exemplar(seconds: number, traceId: string): void {
    this.exemplars ??= [];
    this.exemplars[this.bucketOf(seconds)] = { traceId, value: seconds, timestamp: Date.now() / 1000 };
  }

  private bucketOf(seconds: number): number {
    let i = 0;
    while (i < this.bounds.length && seconds > (this.bounds[i] as number)) i++;
    return i;
  }
}

export interface Exemplar {
  traceId: string;
  value: number;
  /** Unix seconds. */
  timestamp: number;
}

/** Requests of one route by status, and their latency. */
export class RouteMetrics {
  readonly statuses = new Float64Array(STATUSES);

  constructor(
    readonly route: string,
    readonly latency: Bins,
  ) {}

  observe(status: number, seconds: number): void {
    const s = status < STATUSES ? status : 0;
    this.statuses[s] = (this.statuses[s] as number) + 1;
    this.latency.observe(seconds);
  }
}

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
  /** Written by prom-client in the OpenMetrics format only. */
  exemplar?: { labelSet: Record<string, string>; value: number; timestamp: number };
}

const exemplarOf = (bins: Bins, i: number): Pick<Sample, 'exemplar'> => {
  const e = bins.exemplars?.[i];
  return e === undefined
    ? {}
    : { exemplar: { labelSet: { trace_id: e.traceId }, value: e.value, timestamp: e.timestamp } };
};

/**
 * A histogram over Bins series. It gives prom-client's registry what the registry reads from a
 * metric (`get`, and `getForPromString` for the text format), in the shape prom-client's own
 * histograms give, so text output and cluster aggregation treat it as one of theirs.
 */
class BinnedHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    private readonly series: ReadonlyArray<{ labels: Record<string, string>; bins: Bins }>,
  ) {}

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, bins } of this.series) {
      let acc = 0;
      for (const [i, le] of this.bounds.entries()) {
        acc += bins.counts[i] as number;
        values.push({ labels: { ...labels, le }, value: acc, metricName: bucket, ...exemplarOf(bins, i) });
      }
      const inf = this.bounds.length;
      values.push({
        labels: { ...labels, le: '+Inf' },
        value: bins.count,
        metricName: bucket,
        ...exemplarOf(bins, inf),
      });
      values.push({ labels, value: bins.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: bins.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  getForPromString(): ReturnType<BinnedHistogram['get']> {
    return this.get();
  }
}

/** Registers a histogram over the given series (which may grow later). */
export function binnedHistogram(
  registry: Registry,
  name: string,
  help: string,
  bounds: readonly number[],
  series: ReadonlyArray<{ labels: Record<string, string>; bins: Bins }>,
): void {
  // prom-client types a registered metric as one of its own classes; this one reads the same.
  registry.registerMetric(new BinnedHistogram(name, help, bounds, series) as unknown as Histogram);
}

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/** Registers the request counter and latency histogram; the function returned adds a route to both. */
export function requestMetrics(registry: Registry): (route: string) => RouteMetrics {
  const routes: RouteMetrics[] = [];
  const series: Array<{ labels: Record<string, string>; bins: Bins }> = [];
  const exported = new Map<RouteMetrics, Float64Array>();
  new Counter({
    name: 'fuel_gateway_requests_total',
    help: 'Public requests by route and status',
    labelNames: ['route', 'status'],
    registers: [registry],
    collect() {
      for (const r of routes) {
        const done = exported.get(r) as Float64Array;
        r.statuses.forEach((n, status) => {
          if (n > (done[status] as number))
            this.inc({ route: r.route, status: String(status) }, n - (done[status] as number));
        });
        done.set(r.statuses);
      }
    },
  });
  binnedHistogram(
    registry,
    'fuel_gateway_request_duration_seconds',
    'Public request latency by route',
    LATENCY_BUCKETS,
    series,
  );
  return (route) => {
    const r = new RouteMetrics(route, new Bins(LATENCY_BUCKETS));
    routes.push(r);
    series.push({ labels: { route }, bins: r.latency });
    exported.set(r, new Float64Array(STATUSES));
    return r;
  };
}
