import type { Exchange } from '../../http/core-types.js';
import type { MemberRole } from '../../store/store.js';
import type { PortalContext } from './context.js';
import type { SignedIn } from './sessions.js';

/** A signed-in member acting for the account of their session, as every API handler sees them. */
export interface Acting extends SignedIn {
  accountId: string;
  role: MemberRole;
  /** The audit lines' `from`: the member by address. */
  from: string;
}

/** A handler of the API, given the request's path parameters and its body (state-changing ones only). */
export type ApiHandler = (
  x: Exchange,
  c: PortalContext,
  a: Acting,
  params: readonly string[],
  body: Record<string, unknown>,
) => Promise<void>;

/** A body without the form's CSRF field (forms send it beside the operation's fields). */
export function fields(body: Record<string, unknown>): Record<string, unknown> {
  const { csrf_token: _csrf, ...rest } = body;
  return rest;
}
