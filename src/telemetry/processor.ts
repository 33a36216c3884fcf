/**
 * The export queue: spans wait here for the exporter, at most `max` of them, sent in batches
 * with one export in flight. A full queue drops the span and counts it: a collector down or
 * hanging never delays an answer and never holds memory without bound (the OTLP exporter gives
 * up on an export after its timeout, and the queue fills meanwhile).
 */
import { TraceFlags } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';

const BATCH = 512;
const EVERY_MS = 1000;

export class BoundedBatchProcessor implements SpanProcessor {
  private queue: ReadableSpan[] = [];
  private inFlight: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly exporter: SpanExporter,
    private readonly max: number,
    private readonly onDrop: (n: number) => void,
  ) {
    this.timer = setInterval(() => this.flush(), EVERY_MS).unref();
  }

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.queue.length >= this.max) return this.onDrop(1);
    this.queue.push(span);
    if (this.queue.length >= BATCH) this.flush();
  }

  /** Sends the next batch unless one is in flight; a failed export's spans are dropped and counted. */
  private flush(): void {
    if (this.inFlight !== null || this.queue.length === 0) return;
    const batch = this.queue.splice(0, BATCH);
    this.inFlight = new Promise<void>((resolve) =>
      this.exporter.export(batch, (result) => {
        if (result.code !== 0) this.onDrop(batch.length);
        this.inFlight = null;
        resolve();
        if (this.queue.length >= BATCH) this.flush();
      }),
    );
  }

  async forceFlush(): Promise<void> {
    for (let i = 0; i < 20 && (this.queue.length > 0 || this.inFlight !== null); i++) {
      this.flush();
      await this.inFlight;
    }
  }

  async shutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.forceFlush();
    await this.exporter.shutdown();
  }
}
