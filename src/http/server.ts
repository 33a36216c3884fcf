import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, Server as NetServer, type Socket } from 'node:net';
import type { Config } from '../config/schema.js';
import type { ErrorAnswer } from './errors.js';

export interface ParserAnswers {
  bad: ErrorAnswer;
  large: ErrorAnswer;
  timeout: ErrorAnswer;
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/** Answers a request the HTTP parser refused (bad request line, oversized head, too slow) with our error body. */
function onClientError(err: NodeJS.ErrnoException, socket: Socket, answers: ParserAnswers): void {
  if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
  // A connection that has answered before may still be reading the unread body of that request:
  // a 408 written now would be taken as the answer to the client's next request. Just close it.
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.bytesWritten > 0) return void socket.destroy();
  const a =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? answers.large
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? answers.timeout
        : answers.bad;
  const reason = REASONS[a.status] ?? 'Bad Request';
  socket.end(
    `HTTP/1.1 ${a.status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${a.length}\r\n` +
      `Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${a.body}`,
  );
}

export function createListener(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  settings: Config['server'],
  answers: ParserAnswers,
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
    },
    handler,
  );
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => onClientError(err, socket, answers));
  return server;
}

export function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Stops accepting, lets in-flight requests finish, and drops idle keep-alive sockets after
 * `graceMs`. Until then a request may still arrive on an open connection (it is answered):
 * http.Server's own close drops idle sockets at once, and a request already on the wire to one
 * would be lost. Answers written while draining close their connection (see answer.ts `send`).
 */
export function close(server: Server, graceMs = 0): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    NetServer.prototype.close.call(server, () => resolve());
    const sweep = (): void => void server.close();
    if (graceMs > 0) setTimeout(sweep, graceMs).unref();
    else sweep();
  });
}
