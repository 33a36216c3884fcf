/**
 * Failures the gateway raises (as opposed to request outcomes, which are values). Each has a
 * stable code so logs, the admin API and the CLI can name it; `FAILURE_STATUS` is the one place
 * a failure gets its HTTP status.
 */
export const FAILURE_STATUS = {
  BAD_REQUEST: 400,
  PRICE_SET_INVALID: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  HEADERS_TOO_LARGE: 431,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTERNAL: 500,
  CONFIG_INVALID: 500,
  STORE_UNREADABLE: 500,
  STORE_UNAVAILABLE: 503,
} as const;

export type FailureCode = keyof typeof FAILURE_STATUS;

export class GatewayError extends Error {
  constructor(
    readonly code: FailureCode,
    message: string,
    readonly details: string[] = [],
    /** Fields a caller can act on without reading the message (a 409's `successor_key_id`). */
    readonly fields: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'GatewayError';
  }
}

export const isGatewayError = (e: unknown, code?: FailureCode): e is GatewayError =>
  e instanceof GatewayError && (code === undefined || e.code === code);
