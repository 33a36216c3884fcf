/** The `telemetry` section of the config: OpenTelemetry traces and the exemplars that join them to /metrics. */
import { z } from 'zod';

export const telemetry = z.strictObject({
  service_name: z.string().min(1).describe('service.name of every span (env OTEL_SERVICE_NAME wins over it)'),
  traces: z.strictObject({
    enabled: z
      .boolean()
      .describe('Send OpenTelemetry traces (docs/observability.md); off: no tracing code is loaded at all'),
    endpoint: z
      .string()
      .refine((s) => s === '' || /^https?:\/\/[^\s]+$/.test(s), 'expected an http(s) URL or ""')
      .describe(
        'OTLP/HTTP traces URL (a collector\'s port 4318, path /v1/traces); "" takes OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces), else localhost:4318',
      ),
    sample_ratio: z
      .number()
      .min(0)
      .max(1)
      .describe("Share of new traces sampled (parent-based: a trusted proxy's traceparent decides for its own trace)"),
    max_queue_spans: z
      .number()
      .int()
      .min(16)
      .describe('Spans held for export at most; beyond it spans are dropped and counted, never an answer delayed'),
  }),
  exemplars: z
    .boolean()
    .describe(
      'With traces on: the /metrics latency histograms keep, per bucket, the trace id of the last sampled request, given as OpenMetrics exemplars (Accept: application/openmetrics-text)',
    ),
});

export type TelemetryConfig = z.infer<typeof telemetry>;
