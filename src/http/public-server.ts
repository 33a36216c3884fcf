import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, Server as NetServer, type Socket } from 'node:net';
import type { Config } from '../config/config-schema.js';
import { type ErrorAnswer, referencedBody } from './error-kinds.js';
import { newRequestId, REQUEST_ID_HEADER } from './request-id.js';

export interface ParserErrors {
  bad: ErrorAnswer;
  large: ErrorAnswer;
  timeout: ErrorAnswer;
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/** How long a socket answered with a parser error stays open for the client to read the answer. */
export const LINGER_MS = 1000;

// `_httpMessage` is the response Node has given the socket: the oldest one not yet written.
// `parser.incoming` is the last request whose head the socket's parser completed.
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null; parser?: { incoming?: unknown } | null };

// The open sockets of each listener, for the drain to close those with no answer pending.
const sockets = new WeakMap<Server, Set<Socket>>();

// Sockets whose parser has failed: the parser reports again on every later chunk of data.
const refused = new WeakSet<Socket>();

/**
 * Answers a request the HTTP parser refused (bad request line, oversized head, too slow) with our
 * error body, after every earlier request on the connection has had its answer (pipelining), then
 * closes the socket within LINGER_MS whatever the client does: a half-closed socket whose client
 * never closes would hold a descriptor for ever (slowloris).
 */
function onClientError(
  err: NodeJS.ErrnoException,
  socket: HttpSocket,
  errors: ParserErrors,
  waitMs: number,
  read = false,
): void {
  if (refused.has(socket)) return;
  // Node looks for late heads on a timer, and timers run before the sockets are read: an event loop
  // held past the timeout (a busy machine) would refuse a head that is already in the socket. Read
  // it first; a head completed meanwhile is a request, answered as any other.
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && !read) {
    const last = socket.parser?.incoming;
    return void setImmediate(() => {
      if (!socket.destroyed && socket.parser?.incoming === last) onClientError(err, socket, errors, waitMs, true);
    });
  }
  if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
  // A connection that has answered before may still be reading the unread body of that request:
  // a 408 written now would be taken as the answer to the client's next request. Just close it.
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.bytesWritten > 0) return void socket.destroy();
  refused.add(socket);
  const a =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? errors.large
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? errors.timeout
        : errors.bad;
  const reason = REASONS[a.status] ?? 'Bad Request';
  const refusal =
    `HTTP/1.1 ${a.status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${a.length}\r\n` +
    `Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nX-Request-Id: ${newRequestId()}\r\n` +
    `Connection: close\r\n\r\n${a.body}`;
  const giveUp = setTimeout(() => socket.destroy(), waitMs).unref();
  const answerWhenDone = (): void => {
    const pending = socket._httpMessage;
    if (pending && !socket.destroyed) return void pending.once('close', answerWhenDone);
    clearTimeout(giveUp);
    if (!socket.writable) return void socket.destroy();
    socket.end(refusal);
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
  answerWhenDone();
}

export function createListener(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  settings: Config['server'],
  errors: ParserErrors,
): Server {
  const server = createServer(
    {
      // Slow clients (slowloris) are cut off rather than holding sockets open.
      requestTimeout: settings.request_timeout_ms,
      headersTimeout: settings.headers_timeout_ms,
      keepAliveTimeout: settings.keep_alive_timeout_ms,
      maxHeaderSize: settings.max_header_bytes,
      // Node looks for timed-out requests every 30 s by default, far too late for these timeouts.
      connectionsCheckingInterval: Math.min(1000, settings.headers_timeout_ms),
      // request.ts headProblem answers a missing Host with our error body.
      requireHostHeader: false,
    },
    handler,
  );
  // One beyond the limit, so that request.ts headProblem sees a head that has too many.
  server.maxHeadersCount = settings.max_headers + 1;
  const open = new Set<Socket>();
  sockets.set(server, open);
  server.on('connection', (s: Socket) => {
    open.add(s);
    s.once('close', () => open.delete(s));
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) =>
    onClientError(err, socket, errors, settings.request_timeout_ms),
  );
  return server;
}

export function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  }).catch((err: NodeJS.ErrnoException) => {
    // `::` (the default) is every interface, IPv6 and IPv4; a host without IPv6 has only IPv4 ones.
    if (host === '::' && (err.code === 'EAFNOSUPPORT' || err.code === 'EADDRNOTAVAIL'))
      return listen(server, '0.0.0.0', port);
    throw err;
  });
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A listener bound before the app behind it exists: see `bind`. */
export interface BoundListener {
  server: Server;
  address: AddressInfo;
  /** From now on requests go to `handler`. */
  serve(handler: Handler): void;
}

/**
 * Creates and binds a listener whose handler comes later, so that a port already taken stops the
 * start before anything else (the store) is touched. Until `serve`, a request is answered
 * `notReady` (503 with Retry-After) and its connection closed: the app behind it is still starting.
 */
export async function bind(
  settings: Config['server'],
  errors: ParserErrors,
  notReady: ErrorAnswer,
  host: string,
  port: number,
): Promise<BoundListener> {
  let handler: Handler = (_req, res) => {
    const id = newRequestId();
    const body = referencedBody(notReady.body, `"${id}"`);
    res.writeHead(notReady.status, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
      'Cache-Control': 'no-store',
      'Retry-After': '1',
      [REQUEST_ID_HEADER]: id,
      Connection: 'close',
    });
    res.end(body);
  };
  const server = createListener((req, res) => handler(req, res), settings, errors);
  const address = await listen(server, host, port);
  return { server, address, serve: (h) => (handler = h) };
}

/**
 * Stops accepting, lets in-flight requests finish, and after `graceMs` closes every socket that
 * has no answer pending (idle keep-alive, never used, or a head still trickling in: Node stops its
 * header timeouts once the server closes, so those would hold the drain for ever). Until then a
 * request may still arrive on an open connection (it is answered): closing idle sockets at once
 * would lose a request already on the wire. Answers written while draining close their connection
 * (see answer.ts `send`). Whatever is still open after `deadlineMs` is cut.
 */
export function close(server: Server, graceMs = 0, deadlineMs = graceMs): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    NetServer.prototype.close.call(server, () => {
      clearTimeout(deadline);
      resolve();
    });
    const sweep = (): void => {
      server.close();
      for (const s of sockets.get(server) ?? []) if (!(s as HttpSocket)._httpMessage) s.destroy();
    };
    const deadline = setTimeout(() => server.closeAllConnections(), Math.max(graceMs, deadlineMs)).unref();
    // After the poll phase that follows the grace's timer: an event loop held past the grace (a
    // busy machine) runs timers before it reads the sockets, and a request that reached one in
    // time would be lost with its idle-looking connection.
    if (graceMs > 0) setTimeout(() => setImmediate(sweep), graceMs).unref();
    else sweep();
  });
}
