/**
 * Starts tracing when `telemetry.traces.enabled`: only then is the SDK imported (sdk.ts), so
 * with traces off no OpenTelemetry module is loaded at all.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Counter } from 'prom-client';
import type { Config } from '../config/config-schema.js';
import { PROJECT_ROOT } from '../config/load.js';
import type { Metrics } from '../metrics/gateway-metrics.js';
import type { Tracing } from './tracing.js';

export async function startTracing(config: Config, metrics: Metrics): Promise<Tracing | null> {
  if (!config.telemetry.traces.enabled) return null;
  const { version } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
  const dropped = new Counter({
    name: 'fuel_gateway_trace_spans_dropped_total',
    help: 'Spans dropped because the export queue was full or an export failed (collector down or slow)',
    registers: [metrics.registry],
  });
  const { createTracing } = await import('./sdk.js');
  return createTracing(config.telemetry, version, (n) => dropped.inc(n));
}
