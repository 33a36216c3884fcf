import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { TestContext } from './context.js';

/** One request the receiver got. */
export interface Received {
  at: number;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The body parsed, once verified. */
  event: { type: string; timestamp: string; data: Record<string, unknown> };
}

/** How the receiver answers: a status, or never (the connection stays open until it closes). */
export type Mode = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  got: Received[];
  mode: Mode;
  /** Stops listening (connections are cut): the endpoint is unreachable until `start`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** The requests whose signature verifies with `secret`, by standardwebhooks' `verify()`. */
  verified(secret: string): Received[];
  hanging: number;
}

/** A real webhook receiver on loopback (node:http), closed on teardown. */
export async function startReceiver(t: TestContext, port = 0): Promise<Receiver> {
  let server: Server | null = null;
  const sockets = new Set<import('node:net').Socket>();
  const r: Receiver = {
    url: '',
    port,
    got: [],
    mode: { status: 204 },
    hanging: 0,
    async start() {
      const s = createServer((req: IncomingMessage, res: ServerResponse) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
          let event: Received['event'] = { type: '', timestamp: '', data: {} };
          try {
            event = JSON.parse(body) as Received['event'];
          } catch {
            // kept as received
          }
          r.got.push({ at: Date.now(), path: req.url ?? '', headers, body, event });
          const mode = r.mode;
          if (mode === 'hang') {
            r.hanging++;
            return;
          }
          res.writeHead(mode.status, mode.headers ?? {});
          res.end(mode.body ?? '');
        });
      });
      s.on('connection', (c) => {
        sockets.add(c);
        c.on('close', () => sockets.delete(c));
      });
      await new Promise<void>((resolve) => s.listen(r.port, '127.0.0.1', resolve));
      r.port = (s.address() as AddressInfo).port;
      r.url = `http://127.0.0.1:${r.port}/hook`;
      server = s;
    },
    async stop() {
      const s = server;
      server = null;
      if (!s) return;
      for (const c of sockets) c.destroy();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    verified(secret) {
      const wh = new Webhook(secret);
      return r.got.filter((g) => {
        try {
          wh.verify(g.body, g.headers);
          return true;
        } catch {
          return false;
        }
      });
    },
  };
  await r.start();
  t.teardown(() => r.stop());
  return r;
}
