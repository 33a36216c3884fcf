import { connect, type Socket } from 'node:net';

/** Sends raw bytes to a port and returns the whole answer: for requests fetch() refuses to send. */
export function rawRequest(port: number, data: string, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer in time'));
    }, timeoutMs);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString());
    });
    socket.write(data);
  });
}

/** What a client read of an answer before it stopped, or before the server closed the connection. */
export interface PartialDownload {
  /** The answer's head, up to the blank line. */
  head: string;
  /** Body bytes received. */
  bodyBytes: number;
  /** Whether the connection was closed (by either side) when the download was handed back. */
  closed: boolean;
  /** Ends the connection (a client that stopped reading is still connected). */
  close(): void;
}

/**
 * Sends a request over a raw socket and reads the answer until `stopAt` body bytes have arrived,
 * then `hang-up` destroys the socket at once (within the same chunk: loopback is fast enough to
 * deliver the rest before a timer runs), and `stop-reading` pauses it and leaves it open. Resolves
 * then, or when the connection closes first.
 */
export function downloadPart(
  port: number,
  data: string,
  stopAt: number,
  how: 'hang-up' | 'stop-reading',
): Promise<PartialDownload> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let head: Buffer | null = null;
    let pending = Buffer.alloc(0);
    let bodyBytes = 0;
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      resolve({
        head: head?.toString('latin1') ?? pending.toString('latin1'),
        bodyBytes,
        closed: socket.destroyed,
        close: () => socket.destroy(),
      });
    };
    socket.on('data', (c: Buffer) => {
      if (head === null) {
        pending = Buffer.concat([pending, c]);
        const end = pending.indexOf('\r\n\r\n');
        if (end === -1) return;
        head = pending.subarray(0, end);
        bodyBytes = pending.length - end - 4;
      } else bodyBytes += c.length;
      if (bodyBytes < stopAt) return;
      if (how === 'hang-up') socket.destroy();
      else socket.pause();
      finish();
    });
    socket.on('error', () => undefined);
    socket.on('close', finish);
    socket.write(data);
  });
}

/** Everything a server sends on `socket` until it closes it, and whether it has. */
export function received(socket: Socket): { text: () => string; closed: () => boolean } {
  let text = '';
  let closed = false;
  socket.on('data', (d: Buffer) => {
    text += d.toString('latin1');
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    closed = true;
  });
  return { text: () => text, closed: () => closed };
}

/**
 * Writes `data` on `socket` (into the peer's socket buffer at once when both ends are in this
 * process), then holds the event loop for `ms` after its poll phase, as a busy machine holds a
 * server's: on the next turn the server's timers run before it reads what was written.
 */
export function writeThenHoldLoop(socket: Socket, data: string, ms: number): Promise<void> {
  return new Promise((resolve) =>
    setImmediate(() => {
      socket.write(data);
      const until = Date.now() + ms;
      while (Date.now() < until);
      resolve();
    }),
  );
}
