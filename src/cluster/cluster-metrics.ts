import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { z } from 'zod';

// A worker asks the primary for the cluster's metrics; the primary answers with the text.
const ASK = 'fpg:metrics-ask';
const TEXT = 'fpg:metrics-text';
const ANSWER_MS = 6000;

const ask = z.object({ type: z.literal(ASK), id: z.number() });
const text = z.object({
  type: z.literal(TEXT),
  id: z.number(),
  text: z.string().optional(),
  error: z.string().optional(),
});

/**
 * In the primary: answers a worker's request for metrics with the sum over every worker (each
 * metric combined by its prom-client aggregator: counters and histograms add up, gauges say how).
 */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    const m = ask.safeParse(message);
    if (!m.success) return;
    aggregator.clusterMetrics().then(
      (t) => worker.isConnected() && worker.send({ type: TEXT, id: m.data.id, text: t }),
      (err: Error) => worker.isConnected() && worker.send({ type: TEXT, id: m.data.id, error: err.message }),
    );
  });
}

/**
 * In a worker: offers its registry to the primary's collection, and returns the function that
 * gives /metrics the whole cluster's text.
 */
export function clusterMetricsText(registry: Registry): () => Promise<string> {
  // Constructing one makes this worker answer the primary's collection requests.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  const pending = new Map<number, { resolve(t: string): void; reject(e: Error): void }>();
  let next = 0;
  process.on('message', (message: unknown) => {
    const m = text.safeParse(message);
    const waiting = m.success ? pending.get(m.data.id) : undefined;
    if (!m.success || !waiting) return;
    pending.delete(m.data.id);
    if (m.data.text !== undefined) waiting.resolve(m.data.text);
    else waiting.reject(new Error(`cluster metrics: ${m.data.error ?? 'no answer'}`));
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error('cluster metrics: the primary did not answer'));
      }, ANSWER_MS);
      pending.set(id, {
        resolve: (t) => {
          clearTimeout(timer);
          resolve(t);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      process.send?.({ type: ASK, id });
    });
}
