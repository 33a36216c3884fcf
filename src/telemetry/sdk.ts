/**
 * The tracing behind tracing.ts, with the OpenTelemetry SDK: loaded only when traces are on
 * (start.ts). Spans are made with explicit parents (no context manager): a request's span is
 * the parent of its origin tries, a store call's span is linked from the requests it answered.
 */

import type { ClientRequest, IncomingMessage } from 'node:http';
import {
  type Attributes,
  type Context,
  createTraceState,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  ParentBasedSampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { TelemetryConfig } from '../config/telemetry-config.js';
import { scrubKeys } from '../log/scrub.js';
import { clientCalls } from './calls.js';
import { BoundedBatchProcessor } from './processor.js';
import { type StoreCallSpan, storeCalls } from './store-calls.js';
import type { ClientCall, OriginSpan, RequestFacts, RequestSpan, Tracing } from './tracing.js';

// W3C Trace Context: version 00 (or a later one, read as 00), trace id, parent id, flags.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;
const ZEROS = /^0+$/;

/** The span context a `traceparent` names, or null when it is not a valid one. */
export function parseTraceparent(value: unknown, state: unknown): SpanContext | null {
  if (typeof value !== 'string') return null;
  const m = TRACEPARENT.exec(value.trim());
  if (!m || m[1] === 'ff' || (m[1] === '00' && m[5] !== undefined)) return null;
  const [, , traceId = '', spanId = '', flags = '00'] = m;
  if (ZEROS.test(traceId) || ZEROS.test(spanId)) return null;
  return {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) & 1,
    isRemote: true,
    traceState: typeof state === 'string' && state !== '' ? createTraceState(state) : undefined,
  };
}

/** OTLP/HTTP protobuf unless the standard variables ask for JSON. */
function exporter(endpoint: string): SpanExporter {
  const env = process.env;
  const protocol = env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] ?? env['OTEL_EXPORTER_OTLP_PROTOCOL'] ?? 'http/protobuf';
  // An empty endpoint leaves the exporter to the OTEL_EXPORTER_OTLP_* variables and its default.
  const options = { timeoutMillis: 5000, ...(endpoint === '' ? {} : { url: endpoint }) };
  return protocol === 'http/json' ? new JsonExporter(options) : new ProtoExporter(options);
}

export function createTracing(config: TelemetryConfig, version: string, onDrop: (n: number) => void): Tracing {
  let dropped = 0;
  const processor = new BoundedBatchProcessor(exporter(config.traces.endpoint), config.traces.max_queue_spans, (n) => {
    dropped += n;
    onDrop(n);
  });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: process.env['OTEL_SERVICE_NAME'] || config.service_name,
      [ATTR_SERVICE_VERSION]: version,
    }),
    // A root is sampled before the SDK is asked (`request`): what reaches it as a root is kept.
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer('fuel-gateway', version);
  const ratio = config.traces.sample_ratio;
  storeCalls.start = (operation, size, startedAt) => new StoreCall(tracer, operation, size, startedAt);
  clientCalls.start = (name, url, attributes) => new Call(tracer, name, url, attributes);
  // A poll is a root, sampled by the ratio as a request is.
  clientCalls.poll = (to, url) => (Math.random() < ratio ? new OriginTry(tracer, ROOT_CONTEXT, to, url) : NO_TRY);
  return {
    exemplars: config.exemplars,
    request: (req, fromTrustedProxy) => {
      // Only a trusted proxy's `traceparent` is continued, and its sampled flag decides; any other
      // request is sampled here by our ratio alone, before the SDK is asked: an unsampled request
      // makes no span and no object at all, and a client cannot force sampling on.
      const peer = fromTrustedProxy();
      const remote = peer ? parseTraceparent(rawHeader(req, 'traceparent'), rawHeader(req, 'tracestate')) : null;
      if (remote !== null) return (remote.traceFlags & 1) === 1 ? new ServerSpan(tracer, req, remote, null) : null;
      if (Math.random() >= ratio) return null;
      return new ServerSpan(tracer, req, null, parseTraceparent(rawHeader(req, 'traceparent'), undefined));
    },
    call: (name, url, attributes) => new Call(tracer, name, url, attributes),
    dropped: () => dropped,
    shutdown: async () => {
      storeCalls.start = null;
      clientCalls.start = null;
      clientCalls.poll = null;
      await provider.shutdown();
    },
  };
}

/** A header's first value from the raw list: `req.headers` would build an object of them all. */
function rawHeader(req: IncomingMessage, name: string): string | undefined {
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2)
    if ((raw[i] as string).length === name.length && (raw[i] as string).toLowerCase() === name) return raw[i + 1];
  return undefined;
}

/**
 * A request's SERVER span. A trusted proxy's `traceparent` is its parent (and its sampled flag
 * decides); anyone else's is only linked: the span starts a trace of its own, sampled by our
 * ratio, so a client cannot force sampling on.
 */
class ServerSpan implements RequestSpan {
  outcome: string | null = null;
  readonly traceId: string;
  private readonly span: Span;
  private readonly context: Context;

  /** `parent`: a trusted proxy's span; `linked`: an untrusted client's, only linked. */
  constructor(
    private readonly tracer: Tracer,
    req: IncomingMessage,
    parent: SpanContext | null,
    linked: SpanContext | null,
  ) {
    const links: Link[] = linked === null ? [] : [{ context: linked }];
    const context = parent === null ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, parent);
    this.span = tracer.startSpan(req.method ?? 'HTTP', { kind: SpanKind.SERVER, links }, context);
    this.context = trace.setSpan(ROOT_CONTEXT, this.span);
    this.traceId = this.span.spanContext().traceId;
  }

  originTry(to: ClientRequest, url: string): OriginSpan {
    return new OriginTry(this.tracer, this.context, to, url);
  }

  end(f: RequestFacts): void {
    const s = this.span;
    const call = storeCalls.linked();
    if (call instanceof StoreCall) s.addLink({ context: call.span.spanContext() });
    s.updateName(f.route === null ? f.method : `${f.method} ${f.route}`);
    const attributes: Attributes = {
      'http.request.method': f.method,
      'http.response.status_code': f.status,
      // Scrubbed as the logs are: a key can sit in a path segment.
      'url.path': scrubKeys(f.path),
      'url.scheme': 'http',
      'client.address': f.client,
      'fpg.outcome': this.outcome ?? (f.status === 0 ? 'cut' : 'served'),
    };
    if (f.route !== null) attributes['http.route'] = f.route;
    if (f.plan !== null) attributes['fpg.account.plan'] = f.plan;
    if (f.cache !== null) attributes['fpg.cache'] = f.cache;
    s.setAttributes(attributes);
    if (f.status >= 500) s.setStatus({ code: SpanStatusCode.ERROR });
    s.end();
  }
}

const NO_TRY: OriginSpan = { end: () => undefined };

/** One try of the origin: its `traceparent` and `tracestate` go to the origin with the request. */
class OriginTry implements OriginSpan {
  private readonly span: Span;

  constructor(tracer: Tracer, parent: Context, to: ClientRequest, url: string) {
    const u = new URL(url);
    this.span = tracer.startSpan(
      to.method,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': to.method,
          'server.address': u.hostname,
          'server.port': Number(u.port || (u.protocol === 'https:' ? 443 : 80)),
          // Without the query: it carries the service key.
          'url.full': `${u.origin}${scrubKeys(u.pathname)}`,
        },
      },
      parent,
    );
    const c = this.span.spanContext();
    to.setHeader('traceparent', `00-${c.traceId}-${c.spanId}-0${c.traceFlags & 1}`);
    const state = c.traceState?.serialize();
    if (state) to.setHeader('tracestate', state);
    else to.removeHeader('tracestate');
  }

  end(status: number, error?: string): void {
    endCall(this.span, status, error);
  }
}

/** A delivery or poll: a trace of its own. */
class Call implements ClientCall {
  private readonly span: Span;

  constructor(tracer: Tracer, name: string, url: string, attributes: Record<string, string | number>) {
    const u = new URL(url);
    this.span = tracer.startSpan(name, {
      kind: SpanKind.CLIENT,
      attributes: { ...attributes, 'server.address': u.hostname, 'url.full': `${u.origin}${u.pathname}` },
    });
  }

  end(status: number, error?: string): void {
    endCall(this.span, status, error);
  }
}

function endCall(span: Span, status: number, error?: string): void {
  if (status > 0) span.setAttribute('http.response.status_code', status);
  if (error !== undefined) span.setAttribute('error.type', error);
  if (status === 0 || status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** One metering script call to Redis, for a batch of requests. */
class StoreCall implements StoreCallSpan {
  readonly span: Span;

  constructor(tracer: Tracer, operation: string, size: number, startedAt: number) {
    this.span = tracer.startSpan(`${operation} consume`, {
      kind: SpanKind.CLIENT,
      startTime: startedAt,
      attributes: {
        'db.system.name': 'redis',
        'db.operation.name': operation,
        'db.operation.batch.size': size,
      },
    });
  }

  end(error: Error | null): void {
    if (error !== null) {
      this.span.setAttribute('error.type', error.name);
      this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.span.end();
  }
}
