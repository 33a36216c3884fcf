import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { TestContext } from './context.js';
import { waitFor } from './wait.js';

export interface Mail {
  to: string;
  text: string;
}

export interface TestSmtp {
  url: string;
  mails: Mail[];
  /** The sign-in link of the `n`th mail to `to` (1: the first), once it has come. */
  link(to: string, n?: number): Promise<string>;
}

/** A real SMTP server on loopback that keeps every message; closed on teardown. */
export async function startSmtp(t: TestContext): Promise<TestSmtp> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, done) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        // Quoted-printable: soft line breaks and an encoded `=`.
        const text = Buffer.concat(chunks)
          .toString('utf8')
          .replace(/=\r?\n/g, '')
          .replace(/=3D/g, '=');
        for (const r of session.envelope.rcptTo) mails.push({ to: r.address, text });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.server.address() as AddressInfo;
  const linksTo = (to: string): string[] =>
    mails
      .filter((m) => m.to === to)
      .flatMap((m) => m.text.match(/https?:\/\/\S+\/portal\/auth\?token=[A-Za-z0-9_-]+/) ?? []);
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async link(to, n = 1) {
      await waitFor(`mail ${n} to ${to}`, () => linksTo(to).length >= n, 5000);
      return linksTo(to)[n - 1] as string;
    },
  };
}
