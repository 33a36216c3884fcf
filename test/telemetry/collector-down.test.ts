import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { startGateway } from '../helpers/gateway.js';
import { startOtlpReceiver } from '../helpers/otlp.js';
import { scaled } from '../helpers/wait.js';

// Its own file: twelve seconds of load, and a heap measured in this process, which no other test may share.
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
  const load = async (ms: number): Promise<void> => {
    const end = Date.now() + ms;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < end) {
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
  await load(scaled(5000));
  await receiver.stop();
  await load(scaled(5000));
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
