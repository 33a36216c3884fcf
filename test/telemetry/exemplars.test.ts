import t from 'tap';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { type DecodedSpan, startOtlpReceiver } from '../helpers/otlp.js';
import { waitFor } from '../helpers/wait.js';

const OPENMETRICS = 'application/openmetrics-text; version=1.0.0';
const BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

const scrape = async (gw: TestGateway, accept?: string): Promise<{ type: string; text: string }> => {
  const res = await fetch(`http://127.0.0.1:${gw.app.adminAddress.port}/metrics`, {
    headers: accept === undefined ? {} : { accept },
  });
  return { type: res.headers.get('content-type') ?? '', text: await res.text() };
};

/** A traced /healthz, and the trace id the collector got for it. */
async function tracedRequest(gw: TestGateway, spans: DecodedSpan[]): Promise<string> {
  await (await gw.get('/healthz')).arrayBuffer();
  await waitFor('the request span', () => spans.some((s) => s.kind === 2), 5000);
  return (spans.find((s) => s.kind === 2) as DecodedSpan).traceId;
}

t.test(
  "with exemplars on, a sampled request's trace id is on its latency bucket in the OpenMetrics format",
  async (t) => {
    const receiver = await startOtlpReceiver(t);
    const gw = await startGateway(t, {
      telemetry: { traces: { enabled: true, endpoint: receiver.url, sample_ratio: 1 }, exemplars: true },
    });
    const traceId = await tracedRequest(gw, receiver.spans);
    const open = await scrape(gw, `${OPENMETRICS}, text/plain;q=0.5`);
    t.match(open.type, /^application\/openmetrics-text/);
    t.ok(open.text.endsWith('\n# EOF\n'), 'ends with # EOF');
    const lines = open.text.split('\n').filter((l) => l.includes(traceId));
    t.equal(lines.length, 1, 'one bucket carries it');
    const m =
      /^fuel_gateway_request_duration_seconds_bucket\{.*le="([^"]+)"\} \d+ # \{trace_id="([0-9a-f]{32})"\} ([0-9.e-]+) ([0-9.]+)$/.exec(
        lines[0] ?? '',
      );
    t.ok(m, `an exemplar on a latency bucket: ${lines[0]}`);
    const [, le, id, value, timestamp] = m ?? [];
    t.equal(id, traceId);
    const seconds = Number(value);
    const expected = BOUNDS.find((b) => seconds <= b);
    t.equal(le, expected === undefined ? '+Inf' : String(expected), `on the bucket of its ${seconds} s`);
    t.ok(Math.abs(Number(timestamp) - Date.now() / 1000) < 60, 'timestamped in Unix seconds');
    t.match(open.text, /^fuel_gateway_requests_total\{/m, 'counters keep their _total samples');

    const plain = await scrape(gw);
    t.match(plain.type, /^text\/plain; version=0\.0\.4/);
    t.notOk(plain.text.includes('# {'), 'no exemplar in the Prometheus text format');
    t.notOk(plain.text.includes('# EOF'), 'nor the OpenMetrics end');
    t.match(plain.text, /^# TYPE fuel_gateway_requests_total counter$/m, 'its counter names as before');
  },
);

t.test('exemplars are off by default: the OpenMetrics format has none', async (t) => {
  const receiver = await startOtlpReceiver(t);
  const gw = await startGateway(t, {
    telemetry: { traces: { enabled: true, endpoint: receiver.url, sample_ratio: 1 } },
  });
  const traceId = await tracedRequest(gw, receiver.spans);
  const open = await scrape(gw, OPENMETRICS);
  t.ok(open.text.endsWith('\n# EOF\n'));
  t.notOk(open.text.includes(traceId), 'no trace id');
  t.notOk(open.text.includes('trace_id'), 'no exemplar at all');
});
