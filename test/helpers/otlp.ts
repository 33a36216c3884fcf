/**
 * An OTLP/HTTP traces receiver on loopback: no collector binary can be installed here, so the
 * tests decode what the gateway exports with the official OTLP definitions (test/fixtures/otlp)
 * and protobufjs, or as JSON for `http/json`. Modes: 'ok' answers 200, 'hang' reads the body and
 * never answers; `stop` closes it (a collector down).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { TestContext } from './context.js';

const PROTOS = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/otlp');

export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 2 SERVER, 3 CLIENT. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: Array<{ traceId: string; spanId: string }>;
  service: string;
}

export interface OtlpReceiver {
  url: string;
  mode: 'ok' | 'hang';
  spans: DecodedSpan[];
  /** Every decoded body as JSON text, to search for what must never be in a span. */
  bodies: string[];
  /** Export requests received, decoded or not. */
  requests: number;
  contentTypes: Set<string>;
  stop(): Promise<void>;
}

type Json = Record<string, unknown>;

let requestType: protobuf.Type | null = null;

async function exportRequestType(): Promise<protobuf.Type> {
  if (requestType !== null) return requestType;
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(PROTOS, target);
  await root.load('opentelemetry/proto/collector/trace/v1/trace_service.proto');
  requestType = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
  return requestType;
}

const hex = (v: unknown): string =>
  typeof v === 'string' ? v : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : '';

function value(v: Json): string | number | boolean {
  if ('stringValue' in v) return v['stringValue'] as string;
  if ('intValue' in v) return Number(v['intValue']);
  if ('doubleValue' in v) return Number(v['doubleValue']);
  if ('boolValue' in v) return v['boolValue'] as boolean;
  return JSON.stringify(v);
}

function attributes(list: unknown): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const a of (list ?? []) as Json[]) out[a['key'] as string] = value((a['value'] ?? {}) as Json);
  return out;
}

function spansOf(request: Json): DecodedSpan[] {
  const out: DecodedSpan[] = [];
  for (const rs of (request['resourceSpans'] ?? []) as Json[]) {
    const service = String(attributes((rs['resource'] as Json | undefined)?.['attributes'])['service.name'] ?? '');
    for (const ss of (rs['scopeSpans'] ?? []) as Json[]) {
      for (const s of (ss['spans'] ?? []) as Json[]) {
        out.push({
          traceId: hex(s['traceId']),
          spanId: hex(s['spanId']),
          parentSpanId: hex(s['parentSpanId']),
          name: s['name'] as string,
          kind: typeof s['kind'] === 'number' ? s['kind'] : Number(s['kind'] ?? 0),
          attributes: attributes(s['attributes']),
          links: ((s['links'] ?? []) as Json[]).map((l) => ({ traceId: hex(l['traceId']), spanId: hex(l['spanId']) })),
          service,
        });
      }
    }
  }
  return out;
}

export async function startOtlpReceiver(t: TestContext): Promise<OtlpReceiver> {
  const type = await exportRequestType();
  const hung = new Set<ServerResponse>();
  const r: OtlpReceiver = {
    url: '',
    mode: 'ok',
    spans: [],
    bodies: [],
    requests: 0,
    contentTypes: new Set(),
    stop: () => close(server, hung),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.requests++;
      const body = Buffer.concat(chunks);
      const contentType = req.headers['content-type'] ?? '';
      r.contentTypes.add(contentType);
      const decoded = contentType.includes('json')
        ? (JSON.parse(body.toString()) as Json)
        : (type.toObject(type.decode(body), { longs: String, enums: Number, defaults: false }) as Json);
      r.bodies.push(JSON.stringify(decoded, (_k, v: unknown) => (v instanceof Uint8Array ? hex(v) : v)));
      r.spans.push(...spansOf(decoded));
      if (r.mode === 'hang') return void hung.add(res);
      res.writeHead(200, {
        'content-type': contentType.includes('json') ? 'application/json' : 'application/x-protobuf',
      });
      res.end(contentType.includes('json') ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
  t.teardown(() => r.stop());
  return r;
}

function close(server: Server, hung: Set<ServerResponse>): Promise<void> {
  for (const res of hung) res.destroy();
  server.closeAllConnections();
  return new Promise((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
}
