/**
 * How a route describes itself in the OpenAPI document (RouteDef.openapi), like a fastify route's
 * `schema`: the types, and the parts every metered route shares, which come from the core's own
 * error table and rate headers. The OpenAPI feature puts the descriptions it is given together;
 * schemas are named by `ref` and defined there (features/openapi/schemas.ts).
 */
import { type Config, servedMessages } from '../config/config-schema.js';
import { ERROR_STATUS, type ErrorKind } from './error-kinds.js';
import { API_KEY_CHALLENGE } from './response-headers.js';

export type Json = Record<string, unknown>;

/** The parts of an operation the page's API docs read. */
export interface Operation {
  /** Required, as `tags`: a route added without them fails the typecheck. */
  operationId: string;
  /** Its group in the document (document.ts lists them). */
  tags: string[];
  summary: string;
  description?: string;
  parameters?: Array<{
    name: string;
    in: string;
    description: string;
    example?: string | number;
    required?: boolean;
    [key: string]: unknown;
  }>;
  security?: Array<Record<string, string[]>>;
  responses: Record<string, Response>;
  [key: string]: unknown;
}
export interface Response {
  description: string;
  [key: string]: unknown;
}
/** A route read with GET (and HEAD): every route but the leak reports. */
export interface GetItem {
  get: Operation;
  /** Written by the document for every served route (HEAD answers like GET without a body). */
  head?: Operation;
}
/** A route that takes a POST body (the secret-scanning reports). */
export interface PostItem {
  post: Operation;
}
export type PathItem = GetItem | PostItem;

/** What names an operation in the document. */
export interface OperationName {
  operationId: string;
  tags: string[];
}

/** `security` of an operation anyone may call without a key. */
export const PUBLIC: Array<Record<string, string[]>> = [];
export interface OpenApiDocument {
  info: { title: string; description: string; [key: string]: unknown };
  paths: Record<string, PathItem>;
  [key: string]: unknown;
}

/** A named schema of the document's components. */
export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

const header = (description: string): Json => ({ description, schema: { type: 'integer' } });
export const RATE_HEADERS: Json = {
  'X-RateLimit-Limit': header("The account's allowance for the period."),
  'X-RateLimit-Remaining': header('Requests left in the period.'),
  'X-RateLimit-Reset': header('Unix time (seconds) when the period ends.'),
  'RateLimit-Policy': {
    description:
      'IETF draft-ietf-httpapi-ratelimit-headers-11: the allowance as a policy named "period", q = requests per period, w = the period\'s length in seconds; for an account with a burst limit a second policy named "burst", q = requests in any window of w seconds (a Structured Fields List).',
    schema: { type: 'string' },
    example: '"period";q=2000;w=2592000',
  },
  RateLimit: {
    description:
      'IETF draft-ietf-httpapi-ratelimit-headers-11: r = requests left in the period, t = seconds until it ends; with a burst limit, "burst" r = requests the window still has room for, t = seconds until that room grows (a Structured Fields List).',
    schema: { type: 'string' },
    example: '"period";r=1999;t=2591940',
  },
};
const RETRY_AFTER: Json = { 'Retry-After': header('Seconds to wait before trying again.') };
const WWW_AUTHENTICATE: Json = {
  'WWW-Authenticate': {
    description: 'The challenge (RFC 9110 §11.6.1): where the key goes.',
    schema: { type: 'string' },
    example: API_KEY_CHALLENGE,
  },
};

/**
 * On every answer to a key that expires within `keys.expiry_warning_days` (key-check.ts): the
 * document writes it on each response of a route that takes a key.
 */
export const KEY_EXPIRES: Json = {
  'X-API-Key-Expires': {
    description:
      "When the request's key expires (ISO 8601), sent while that is within the gateway's warning window (7 days by default): rotate the key before then.",
    schema: { type: 'string', format: 'date-time' },
    example: '2026-12-01T00:00:00.000Z',
  },
};

const STATUS_TEXT: Record<number, string> = {
  400: 'A query parameter is missing or invalid; nothing was counted.',
  404: 'No such path.',
  501: 'Historical data is switched off on this gateway.',
  503: 'The store or the prices are unavailable for a moment.',
};

// A key's refusals, each a cause its status's description names when the route can give it.
const KEY_TEXT: Partial<Record<ErrorKind, string>> = {
  missing_key: 'no key was sent',
  invalid_key: 'the key is unknown (invalid keys count towards a per-address throttle)',
  expired_key: 'the key has expired',
  inactive_key: 'the account is inactive',
  account_unpaid: 'the account is inactive for an unpaid subscription (billing.stripe.unpaid_message)',
  key_scope: "the key's scopes do not include this endpoint",
  key_address: "the request comes from an address outside the key's allowed_cidrs",
};

// The leak reports' refusals: nothing of them is a key or a query.
const KIND_TEXT: Partial<Record<ErrorKind, string>> = {
  invalid_signature: "The report's signature is missing or does not verify; nothing changed.",
  report_too_large: 'The report is larger than 1 MiB; nothing changed.',
  invalid_report:
    'The report is not a JSON array of {token, type, url, source}, or holds more than 1000; nothing changed.',
  too_many_tokens:
    'The report is not a JSON array of {token, type, url, source}, or holds more than 1000; nothing changed.',
};

/** The error answers a route can give, grouped by status, with the configured messages as examples. */
export function errorResponses(config: Config, kinds: ErrorKind[]): Record<string, Response> {
  const byStatus = new Map<number, ErrorKind[]>();
  const messages = servedMessages(config);
  for (const k of kinds) byStatus.set(ERROR_STATUS[k], [...(byStatus.get(ERROR_STATUS[k]) ?? []), k]);
  const out: Record<string, Response> = {};
  for (const [status, list] of byStatus) {
    const examples = Object.fromEntries(list.map((k) => [k, { value: { success: false, message: messages[k] } }]));
    const limited = list.some(isLimit);
    const keyed = list.filter((k) => KEY_TEXT[k] !== undefined);
    const headers =
      status === 429
        ? { ...RETRY_AFTER, ...(limited && RATE_HEADERS) }
        : status === 503
          ? RETRY_AFTER
          : status === 401 && keyed.length > 0
            ? WWW_AUTHENTICATE
            : undefined;
    const own = list.map((k) => KIND_TEXT[k]);
    out[String(status)] = {
      description:
        status === 429
          ? tooMany(list)
          : keyed.length > 0
            ? refused(keyed)
            : own.every(Boolean)
              ? (own[0] as string)
              : (STATUS_TEXT[status] ?? 'Error'),
      ...(headers && { headers }),
      content: { 'application/json': { schema: ref('Error'), examples } },
    };
  }
  return out;
}

/** A key's refusals of one status, each cause named: "No key was sent, the key is unknown … or …". */
function refused(kinds: ErrorKind[]): string {
  const causes = kinds.map((k) => KEY_TEXT[k] as string);
  const last = causes.pop() as string;
  const text = causes.length > 0 ? `${causes.join(', ')}, or ${last}` : last;
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}; nothing was counted.`;
}

/** The refusals of a counted request, which carry the rate headers. */
const isLimit = (k: ErrorKind): boolean => k === 'limit_monthly' || k === 'limit_trial' || k === 'burst';

/** A 429 says which of its causes the route has: usage.php and usage-history.php count nothing, so only the throttle. */
function tooMany(kinds: ErrorKind[]): string {
  const limit = kinds.some(isLimit);
  const throttle = kinds.includes('throttled');
  const causes = kinds.includes('burst')
    ? 'The allowance is used up, or the account is over its burst limit (not counted; `Retry-After` says when the window has room)'
    : 'The allowance is used up';
  if (limit && throttle) return `${causes}, or the address is throttled after too many invalid keys.`;
  return limit ? `${causes}.` : 'The address is throttled after too many invalid keys.';
}

/**
 * Every operation's `default`: what no operation lists, because a GET or HEAD does not provoke it
 * on purpose. A bug answers 500 with this body; the document's description names the rest (405 for
 * another method, 404, 408, 431).
 */
export const UNEXPECTED: Response = {
  description: 'An unexpected failure (500), with the same error body.',
  content: { 'application/json': { schema: ref('Error') } },
};

/** What any request with a key may be refused for. */
export const KEY_ERRORS: ErrorKind[] = [
  'missing_key',
  'invalid_key',
  'expired_key',
  'inactive_key',
  'account_unpaid',
  'key_scope',
  'key_address',
  'throttled',
  'unavailable',
];
const METERED: ErrorKind[] = [...KEY_ERRORS, 'limit_monthly', 'limit_trial', 'burst'];

export const query = (
  name: string,
  description: string,
  schema: Json,
  example?: string,
): NonNullable<Operation['parameters']>[number] & Json => ({
  name,
  in: 'query',
  description,
  schema,
  ...(example && { example }),
});

export function jsonOk(description: string, schema: string, rated = true): Response {
  return {
    description,
    ...(rated && { headers: RATE_HEADERS }),
    content: { 'application/json': { schema: ref(schema) } },
  };
}

/** A route of the metered pipeline: the key, the allowance, and the errors of its own (`extra`). */
export function meteredPath(
  config: Config,
  name: OperationName,
  summary: string,
  description: string,
  ok: Response,
  params: Operation['parameters'],
  extra: ErrorKind[],
): GetItem {
  return {
    get: {
      ...name,
      summary,
      description: `${description} Counted against the allowance (HEAD: the same headers, not counted).`,
      security: [{ ApiKeyQuery: [] }, { ApiKeyHeader: [] }],
      parameters: params,
      responses: { 200: ok, ...errorResponses(config, [...extra, ...METERED]) },
    },
  };
}

const ETAG: Json = {
  ETag: {
    description:
      'Weak ETag naming the served price set (and the release): the same on every gateway, changed whenever the prices are. Send it back in If-None-Match.',
    schema: { type: 'string' },
    example: 'W/"q4bVYr0cM0p1yLhq9lU3Hq0qXWk7tZ2"',
  },
};

/**
 * A route whose answers carry the gateway's ETag (etag.ts): an optional If-None-Match, the ETag
 * on its 200, and the 304 it answers to a match (`rated`: with the rate headers, not counted).
 */
export function conditional(item: GetItem, rated: boolean, note: string): GetItem {
  const op = item.get;
  const ok = op.responses['200'] as Response;
  return {
    ...item,
    get: {
      ...op,
      parameters: [
        ...(op.parameters ?? []),
        {
          name: 'If-None-Match',
          in: 'header',
          description: `An ETag of an earlier answer (a list, or *, compared weakly). When it matches: 304 Not Modified without a body. ${note}`,
          schema: { type: 'string' },
          example: 'W/"q4bVYr0cM0p1yLhq9lU3Hq0qXWk7tZ2"',
        },
      ],
      responses: {
        ...op.responses,
        200: { ...ok, headers: { ...((ok.headers as Json | undefined) ?? {}), ...ETAG } },
        304: {
          description: `Not Modified: the prices are those of the ETag sent. ${note}`,
          headers: rated ? { ...ETAG, ...RATE_HEADERS } : ETAG,
        },
      },
    },
  };
}
