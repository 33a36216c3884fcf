import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { startOtlpReceiver } from '../helpers/otlp.js';
import { scaled } from '../helpers/wait.js';

// Its own file: 26,000 requests of load, and a heap measured in this process, which no other test may share.
// Spans enough in each phase that a queue without its bound grows the heap past the test's 16 MiB
// (planted, an unbounded queue grew it 19.2 MiB over 2 × 10,000; these are 2 × 12,000).
const PHASE_REQUESTS = 12_000;
const traced = (url: string): Record<string, unknown> => ({
  telemetry: { traces: { enabled: true, endpoint: url, sample_ratio: 1, max_queue_spans: 256 } },
});

t.test('the collector down, then hanging, under load: answers unaffected, memory flat, drops counted', async (t) => {
  const receiver = await startOtlpReceiver(t);
  // The access log off: the test gateway keeps its log lines in memory.
  const gw = await startGateway(t, { ...traced(receiver.url), log: { access: false } });
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const key = gw.app.demoKeys['developer'] as string;
  const statuses = new Map<number, number>();
  let slowest = 0;
  // A number of requests, not a time: a loaded machine answers fewer in a given time, and a
  // duration stretched by TEST_TIME_FACTOR made this file the suite's longest busy loop (32 s).
  const load = async (requests: number): Promise<void> => {
    let left = requests;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (left-- > 0) {
          const start = Date.now();
          const r = await gw.get(`/healthz?n=${key.length}`);
          await r.arrayBuffer();
          slowest = Math.max(slowest, Date.now() - start);
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        }
      }),
    );
  };
  await load(2000);
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  receiver.mode = 'hang';
  await load(PHASE_REQUESTS);
  await receiver.stop();
  await load(PHASE_REQUESTS);
  gc();
  const heapAfter = process.memoryUsage().heapUsed;
  t.same([...statuses.keys()], [200], `every answer 200 (${statuses.get(200)} requests)`);
  t.ok(slowest < scaled(1000), `slowest answer ${slowest} ms`);
  const grown = (heapAfter - heapBefore) / 2 ** 20;
  t.ok(grown < 16, `heap grew ${grown.toFixed(1)} MiB (the queue holds 256 spans at most)`);
  const metrics = await (await fetch(`http://127.0.0.1:${gw.app.adminAddress.port}/metrics`)).text();
  const dropped = Number(/^fuel_gateway_trace_spans_dropped_total (\d+)/m.exec(metrics)?.[1] ?? 0);
  t.ok(dropped > 256, `spans dropped and counted (${dropped})`);
});
