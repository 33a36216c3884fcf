/**
 * Failures the gateway raises (as opposed to request outcomes, which are values). Each has a
 * stable code so logs and the CLI can name it.
 */
export type FailureCode =
  | 'CONFIG_INVALID'
  | 'STORE_UNAVAILABLE'
  | 'PRICE_SET_INVALID'
  | 'NOT_FOUND'
  | 'BAD_REQUEST'
  | 'CONFLICT';

export class GatewayError extends Error {
  constructor(
    readonly code: FailureCode,
    message: string,
    readonly details: string[] = [],
  ) {
    super(message);
    this.name = 'GatewayError';
  }
}

export const isGatewayError = (e: unknown, code?: FailureCode): e is GatewayError =>
  e instanceof GatewayError && (code === undefined || e.code === code);
