import { Counter, type Histogram, type Registry } from 'prom-client';

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const STATUSES = 600;

/**
 * Requests of one route by status, and their latency, kept as plain numbers: a request costs a
 * few additions, where prom-client's labelled children hash their labels on every call (about
 * 0.4 µs, a few percent of a request; `npm run bench`). They reach prom-client when scraped.
 */
export class RouteMetrics {
  readonly counts = new Float64Array(STATUSES);
  /** Per bucket, not cumulative; the last one is +Inf. */
  readonly bins = new Float64Array(LATENCY_BUCKETS.length + 1);
  sum = 0;
  count = 0;

  constructor(readonly route: string) {}

  observe(status: number, seconds: number): void {
    const s = status < STATUSES ? status : 0;
    this.counts[s] = (this.counts[s] as number) + 1;
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[i] as number)) i++;
    this.bins[i] = (this.bins[i] as number) + 1;
    this.sum += seconds;
    this.count++;
  }
}

const NAME = 'fuel_gateway_request_duration_seconds';

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
}

/**
 * The request latency histogram, read from every route's RouteMetrics when scraped. It gives
 * prom-client's registry what it reads from a metric (`get`, and `getForPromString` for the text
 * format), in the shape prom-client's own histograms give.
 */
class RouteLatency {
  readonly name = NAME;
  readonly help = 'Public request latency by route';
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(private readonly routes: readonly RouteMetrics[]) {}

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    for (const r of this.routes) {
      let acc = 0;
      LATENCY_BUCKETS.forEach((le, i) => values.push({ labels: { route: r.route, le }, value: (acc += r.bins[i] as number), metricName: `${NAME}_bucket` }));
      values.push({ labels: { route: r.route, le: '+Inf' }, value: r.count, metricName: `${NAME}_bucket` });
      values.push({ labels: { route: r.route }, value: r.sum, metricName: `${NAME}_sum` });
      values.push({ labels: { route: r.route }, value: r.count, metricName: `${NAME}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  getForPromString(): ReturnType<RouteLatency['get']> {
    return this.get();
  }
}

/** Registers the request counter and latency histogram; `forRoute` adds a route to both. */
export function requestMetrics(registry: Registry): (route: string) => RouteMetrics {
  const routes: RouteMetrics[] = [];
  const exported = new Map<RouteMetrics, Float64Array>();
  new Counter({
    name: 'fuel_gateway_requests_total',
    help: 'Public requests by route and status',
    labelNames: ['route', 'status'],
    registers: [registry],
    collect() {
      for (const r of routes) {
        const done = exported.get(r) as Float64Array;
        r.counts.forEach((n, status) => {
          if (n > (done[status] as number)) this.inc({ route: r.route, status: String(status) }, n - (done[status] as number));
        });
        done.set(r.counts);
      }
    },
  });
  // prom-client types a registered metric as one of its own classes; this one reads the same.
  registry.registerMetric(new RouteLatency(routes) as unknown as Histogram);
  return (route) => {
    const r = new RouteMetrics(route);
    routes.push(r);
    exported.set(r, new Float64Array(STATUSES));
    return r;
  };
}
