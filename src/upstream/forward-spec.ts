import { referencedBody } from '../http/error-kinds.js';
import type { RequestSpan } from '../telemetry/tracing.js';

/** What the metered front door hands over once a pass-through request is admitted (and counted). */
export interface ForwardSpec {
  /** The `proxy_paths` entry the path matched: the metrics label. */
  route: string;
  /** The request's path (as routed and checked) and query (without `?`), forwarded with the key replaced. */
  path: string;
  search: string;
  /** The `usage` JSON put into a JSON success in place of the origin's. */
  usage: string;
  /** Added to a success (X-RateLimit-*, X-Cache), as name, value, name, value … */
  headers: Array<string | number>;
  /**
   * Added to an answer that is not a success: the same, with the request given back. Read only
   * for such an answer, so a hit never builds it.
   */
  readonly refunded: Array<string | number>;
  /** Called once when the answer is not a success, so the request does not count. */
  onFailure(): void;
  /** The request id, JSON-encoded: the `ref` of our 5xx bodies. */
  readonly requestIdJson: string;
  /** The request's span (the parent of the origin try's), or null when traces are off. */
  readonly span: RequestSpan | null;
}

/** Our error body for an answer the origin did not give: a 5xx one names the request (`ref`). */
export const ownErrorBody = (body: string, status: number, spec: ForwardSpec): string =>
  status >= 500 ? referencedBody(body, spec.requestIdJson) : body;
