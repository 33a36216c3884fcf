/**
 * Leak reports from GitHub's secret-scanning partner programme (docs/security.md): GitHub finds
 * one of our keys in public code and POSTs the match here, signed. Each live key is revoked (or
 * only reported) by the handler the composition root hands over; the answer labels every token
 * in GitHub's own format. Not metered: the report carries no key of its own.
 */
import type { IncomingMessage } from 'node:http';
import type { Config } from '../../config/config-schema.js';
import type { Exchange, RouteDef } from '../../http/core-types.js';
import { clientOf, crashed, fail, failRetry, readBody, send, storeFailed } from '../../http/metered/pipeline.js';
import { errorResponses, type PostItem, ref } from '../../http/openapi.js';
import { labelOf, MAX_REPORT_BYTES, MAX_TOKENS, parseReport, type ReportedToken } from './report.js';
import { ReportSignatures } from './signature.js';

export type { ReportedToken } from './report.js';

export const SECRET_SCANNING_PATH = '/fuel-api/secret-scanning';

/**
 * Acts on a signed report: for each token, whether it was a live key (then revoked or reported,
 * by `secret_scanning.action`). `from` is the reporter's address, for the audit line.
 */
export type LeakHandler = (tokens: readonly ReportedToken[], from: string) => Promise<boolean[]>;

/** The route, only while GitHub's public keys are configured: without them it answers 404. */
export function secretScanningRoutes(config: Config, leaks: LeakHandler): RouteDef[] {
  const { public_keys } = config.secret_scanning;
  if (public_keys.length === 0) return [];
  const signatures = new ReportSignatures(public_keys);
  return [
    {
      path: SECRET_SCANNING_PATH,
      route: {
        kind: 'handler',
        name: 'secret-scanning',
        methods: ['POST'],
        handle: (x) => receive(x, signatures, leaks),
      },
      openapi: describe(config),
    },
  ];
}

/**
 * Throttle → signature headers → body (bounded) → signature → report → the leak handler. A
 * report that fails its signature counts towards the invalid-key throttle of its address, as an
 * invalid key does: a forger gets no more tries than a key scanner.
 */
function receive(x: Exchange, signatures: ReportSignatures, leaks: LeakHandler): void {
  const { req } = x;
  const { throttle } = x.services;
  const address = clientOf(x);
  const blockedMs = throttle.anyBlocked() ? throttle.blockedFor(address) : 0;
  if (blockedMs > 0) return unread(x, () => failRetry(x, 'throttled', Math.ceil(blockedMs / 1000)));
  const identifier = header(req, 'github-public-key-identifier');
  const signature = header(req, 'github-public-key-signature');
  if (identifier === undefined || signature === undefined) return unread(x, () => forged(x, address));
  const tooLarge = (): void => fail(x, 'report_too_large');
  if (Number(req.headers['content-length'] ?? 0) > MAX_REPORT_BYTES) return unread(x, tooLarge);
  readBody(req, MAX_REPORT_BYTES)
    .then((body) => {
      if (body === null) return unread(x, tooLarge);
      if (!signatures.verifies(identifier, signature, body)) return forged(x, address);
      const tokens = parseReport(body);
      if (typeof tokens === 'string') return fail(x, tokens);
      return leaks(tokens, address).then(
        (live) => answer(x, JSON.stringify(tokens.map((t, i) => labelOf(t, live[i] === true)))),
        (err: unknown) => void storeFailed(x, '', err, 'nothing'),
      );
    })
    .catch((err: unknown) => crashed(x, err));
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
};

/**
 * Refused before its body is read (or all of it): the connection closes after the answer, rather
 * than read and drop whatever the client goes on sending.
 */
function unread(x: Exchange, answer: () => void): void {
  x.res.setHeader('Connection', 'close');
  answer();
}

function forged(x: Exchange, address: string): void {
  x.services.throttle.fail(address);
  fail(x, 'invalid_signature');
}

function answer(x: Exchange, body: string): void {
  send(
    x,
    200,
    [
      'Content-Type',
      'application/json',
      'Content-Length',
      Buffer.byteLength(body),
      'Cache-Control',
      'no-store',
      'X-Content-Type-Options',
      'nosniff',
    ],
    body,
  );
}

function describe(config: Config): PostItem {
  return {
    post: {
      operationId: 'postSecretScanningReport',
      tags: ['Secret scanning'],
      summary: "A leak report from GitHub's secret scanning",
      description: `GitHub's secret-scanning partner report: a JSON array of {token, type, url, source}, at most ${MAX_TOKENS} tokens and 1 MiB, signed with ECDSA P-256 (SHA-256) over the raw body by one of the keys in secret_scanning.public_keys. Each token that is a live key is ${config.secret_scanning.action === 'revoke' ? 'revoked at once' : 'reported (secret_scanning.action: notify)'}, written to the audit log and told as a key.leaked webhook event. Reports whose signature fails count towards the invalid-key throttle of their address.`,
      security: [],
      parameters: [
        {
          name: 'Github-Public-Key-Identifier',
          in: 'header',
          required: true,
          description: 'Which of the configured public keys signed the report.',
          schema: { type: 'string' },
        },
        {
          name: 'Github-Public-Key-Signature',
          in: 'header',
          required: true,
          description: 'The signature of the raw body: ECDSA P-256 with SHA-256, DER, base64.',
          schema: { type: 'string' },
        },
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: ref('LeakReport') } },
      },
      responses: {
        200: {
          description:
            "Each token labelled in GitHub's format: true_positive when it was a live key, else false_positive; token_hash is its SHA-256 (hex).",
          content: { 'application/json': { schema: ref('LeakLabels') } },
        },
        ...errorResponses(config, [
          'invalid_report',
          'too_many_tokens',
          'invalid_signature',
          'report_too_large',
          'throttled',
          'unavailable',
        ]),
      },
    },
  };
}
