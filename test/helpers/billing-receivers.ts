import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Ajv, type ValidateFunction } from 'ajv';

/**
 * Real billing receivers on loopback, strict as the real ones: a Stripe Billing Meter Events
 * endpoint that checks each request against Stripe's request schema and keeps each identifier
 * once (replaying its first answer to the same Idempotency-Key, as Stripe does), and an
 * OpenMeter-style CloudEvents ingest that checks each event against the CloudEvents 1.0 JSON
 * schema (github.com/cloudevents/spec, cloudevents/formats/cloudevents.json) and keeps each
 * source + id once.
 */

/** How a receiver answers a request: a status; or never (`hang`); or it takes the events and then never answers (`thenHang`). */
export type ReceiverMode =
  | { status: number; body?: string; retryAfter?: string; location?: string; thenHang?: boolean }
  | 'hang';

export interface BillingReceiver {
  url: string;
  /** Requests in the order they came, with what was wrong with them (empty: valid). */
  requests: Array<{ body: string; headers: IncomingMessage['headers']; problems: string[]; answered: number | 'hang' }>;
  /** Requests answered with `mode` first, in turn; then 200. */
  modes: ReceiverMode[];
  /** Deduplicated totals: requests billed per customer (Stripe) or subject (CloudEvents). */
  totals(): Record<string, number>;
  /** Events (identifiers or source+id) taken, each once. */
  taken: Map<string, { subject: string; value: number; timestamp: number }>;
  hanging: number;
  close(): Promise<void>;
}

const ajv = new Ajv({ allErrors: true, strict: false });
// The schemas' formats, checked as their receivers do.
ajv.addFormat('unix-time', { type: 'number', validate: (n: number) => Number.isInteger(n) && n > 0 });
ajv.addFormat(
  'date-time',
  (s: string) =>
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s)),
);
ajv.addFormat('uri-reference', (s: string) => s.length > 0 && !/\s/.test(s));
ajv.addFormat('uri', (s: string) => URL.canParse(s));
const fixture = (name: string): object =>
  JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8'));
const stripeSchema: ValidateFunction = ajv.compile(fixture('stripe-meter-events-request.schema.json'));
const cloudEventSchema: ValidateFunction = ajv.compile(fixture('cloudevents-1.0.schema.json'));

const problemsOf = (v: ValidateFunction): string[] =>
  (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'invalid'}`);

/** Stripe's form encoding decoded: `payload[value]=3` is payload.value, numbers where the schema wants them. */
function decodeStripeForm(body: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(body)) {
    const m = /^(\w+)\[(\w*)\]$/.exec(k);
    if (m === null) {
      out[k] = k === 'timestamp' && /^\d+$/.test(v) ? Number(v) : v;
      continue;
    }
    const [, name = '', field = ''] = m;
    if (field === '') out[name] = [...((out[name] as string[] | undefined) ?? []), v];
    else out[name] = { ...((out[name] as Record<string, string> | undefined) ?? {}), [field]: v };
  }
  return out;
}

async function serve(
  handle: (body: string, req: IncomingMessage) => { problems: string[]; accept(): void },
): Promise<BillingReceiver> {
  const sockets = new Set<Socket>();
  const r: BillingReceiver = {
    url: '',
    requests: [],
    modes: [],
    taken: new Map(),
    hanging: 0,
    totals() {
      const out: Record<string, number> = {};
      for (const e of r.taken.values()) out[e.subject] = (out[e.subject] ?? 0) + e.value;
      return out;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const { problems, accept } = handle(body, req);
      const mode = r.modes.shift() ?? { status: 200 };
      r.requests.push({ body, headers: req.headers, problems, answered: mode === 'hang' ? 'hang' : mode.status });
      if (mode === 'hang') {
        r.hanging++;
        return;
      }
      if (problems.length > 0) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'invalid_request_error', message: problems.join('; ') } }));
        return;
      }
      if (mode.status >= 200 && mode.status < 300) accept();
      if (mode.thenHang === true) {
        r.hanging++;
        return;
      }
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (mode.retryAfter !== undefined) headers['retry-after'] = mode.retryAfter;
      if (mode.location !== undefined) headers.location = mode.location;
      res.writeHead(mode.status, headers);
      res.end(mode.body ?? '{}');
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return r;
}

/** Stripe's POST /v1/billing/meter_events, with its authentication, schema and deduplication. */
export async function startStripeReceiver(apiKey: string): Promise<BillingReceiver> {
  let receiver: BillingReceiver | null = null;
  receiver = await serve((body, req) => {
    const problems: string[] = [];
    if (req.method !== 'POST' || req.url !== '/v1/billing/meter_events') problems.push(`${req.method} ${req.url}`);
    if (req.headers.authorization !== `Bearer ${apiKey}`) problems.push('authorization: not the API key');
    if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') problems.push('content-type');
    const form = decodeStripeForm(body);
    if (!stripeSchema(form)) problems.push(...problemsOf(stripeSchema));
    const payload = (form.payload ?? {}) as Record<string, string>;
    if (!/^\d+$/.test(payload.value ?? '')) problems.push('payload[value]: expected a whole number');
    if (!/^cus_\w+$/.test(payload.stripe_customer_id ?? '')) problems.push('payload[stripe_customer_id]');
    const ts = form.timestamp as number;
    if (!(ts * 1000 > Date.now() - 35 * 86_400_000 && ts * 1000 < Date.now() + 300_000))
      problems.push('timestamp: must be within the past 35 days');
    if (req.headers['idempotency-key'] !== form.identifier) problems.push('idempotency-key: not the identifier');
    return {
      problems,
      accept: () => {
        const id = String(form.identifier);
        // Stripe keeps an identifier once: a resend is answered, not counted again.
        if (!receiver?.taken.has(id))
          receiver?.taken.set(id, {
            subject: payload.stripe_customer_id ?? '',
            value: Number(payload.value),
            timestamp: ts,
          });
      },
    };
  });
  return receiver;
}

/** An OpenMeter-style ingest of CloudEvents batches, with its bearer token, schema and deduplication. */
export async function startCloudEventsReceiver(token: string): Promise<BillingReceiver> {
  let receiver: BillingReceiver | null = null;
  receiver = await serve((body, req) => {
    const problems: string[] = [];
    if (req.headers.authorization !== `Bearer ${token}`) problems.push('authorization: not the token');
    if (req.headers['content-type'] !== 'application/cloudevents-batch+json') problems.push('content-type');
    let events: unknown[] = [];
    try {
      const parsed: unknown = JSON.parse(body);
      if (Array.isArray(parsed)) events = parsed;
      else problems.push('expected a JSON array of events');
    } catch {
      problems.push('not JSON');
    }
    for (const e of events) {
      if (!cloudEventSchema(e)) problems.push(...problemsOf(cloudEventSchema));
      const data = (e as { data?: { requests?: unknown } }).data;
      if (!Number.isInteger(data?.requests)) problems.push('data.requests: expected a whole number');
    }
    return {
      problems,
      accept: () => {
        for (const e of events as Array<{
          id: string;
          source: string;
          subject: string;
          time: string;
          data: { requests: number };
        }>) {
          const key = `${e.source}\u0000${e.id}`;
          if (!receiver?.taken.has(key))
            receiver?.taken.set(key, { subject: e.subject, value: e.data.requests, timestamp: Date.parse(e.time) });
        }
      },
    };
  });
  return receiver;
}
