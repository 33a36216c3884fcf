/**
 * /metrics in the OpenMetrics format (`Accept: application/openmetrics-text`), which carries the
 * latency histograms' exemplars (`telemetry.exemplars`). prom-client picks the format per
 * registry, and renames counters on the registry it renders: so the metrics are rendered through
 * a registry of their own, made per scrape, of wrappers, and the default registry's text format
 * stays as it is.
 */
import { type Metric, type OpenMetricsContentType, Registry } from 'prom-client';

interface Readable {
  name: string;
  type: string;
  get(): Promise<{ name: string }>;
}

export const OPENMETRICS_TYPE = Registry.OPENMETRICS_CONTENT_TYPE;

export function openMetricsText(source: Registry): Promise<string> {
  const view = new Registry<OpenMetricsContentType>();
  view.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  for (const metric of source.getMetricsAsArray() as unknown as Readable[]) {
    const wrapper: Readable = {
      name: metric.name,
      type: metric.type,
      // The name as the view left it: a counter's without `_total`, which the format adds back.
      get: async () => ({ ...(await metric.get()), name: wrapper.name }),
    };
    view.registerMetric(wrapper as unknown as Metric);
  }
  return view.metrics();
}
