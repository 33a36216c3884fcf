import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config/schema.js';
import type { ErrorAnswer } from './errors.js';

/** Answers a request the HTTP parser refused (bad request line, oversized headers) with our error body. */
function onClientError(err: NodeJS.ErrnoException, socket: Socket, answers: { bad: ErrorAnswer; large: ErrorAnswer }): void {
  if (!socket.writable || (err.code === 'ECONNRESET')) return void socket.destroy();
  const a = err.code === 'HPE_HEADER_OVERFLOW' ? answers.large : answers.bad;
  const reason = a.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${a.status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${a.length}\r\n` +
      `Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${a.body}`,
  );
}

export function createListener(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  settings: Config['server'],
  answers: { bad: ErrorAnswer; large: ErrorAnswer },
): Server {
  const server = createServer(
    {
      // Slow clients (slowloris) are cut off rather than holding sockets open.
      requestTimeout: settings.request_timeout_ms,
      headersTimeout: settings.headers_timeout_ms,
      keepAliveTimeout: settings.keep_alive_timeout_ms,
      maxHeaderSize: settings.max_header_bytes,
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

/** Stops accepting, lets in-flight requests finish, and drops idle keep-alive sockets. */
export function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
