import type { IncomingMessage } from 'node:http';

/** A request's body, or null once it passes `max` bytes (reading stops there, the rest unread). */
export function readBody(req: IncomingMessage, max: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= max) return void chunks.push(c);
      req.removeAllListeners('data');
      req.pause();
      resolve(null);
    });
    req.on('error', reject);
    req.on('end', () => resolve(Buffer.concat(chunks, size)));
  });
}
