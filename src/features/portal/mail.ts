import type { SendLink } from './deps.js';

const TEXT = (link: string): string =>
  `Sign in to the Fuel Price Gateway portal:\n\n${link}\n\nThe link works once, for 15 minutes. If you did not ask for it, ignore this email.\n`;

/** Sends each link by SMTP (`portal.smtp.url`, env SMTP_URL). */
export function smtpSender(url: string, from: string): SendLink {
  // Imported only where SMTP is set: nodemailer costs every start ~0.1 s.
  const transport = import('nodemailer').then(({ createTransport }) => createTransport(url));
  return async (to, link) => {
    await (await transport).sendMail({ from, to, subject: 'Your sign-in link', text: TEXT(link) });
  };
}

/**
 * With no SMTP server, as in `npm start`: the link is printed on the console beside the curl
 * line, never in the log (a log line is redacted of tokens, and may be shipped elsewhere).
 */
export function consoleSender(print: (line: string) => void): SendLink {
  return async (to, link) => print(`portal sign-in link for ${to}: ${link}`);
}
