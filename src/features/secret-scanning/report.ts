import { createHash } from 'node:crypto';
import { z } from 'zod';

/** At most this many tokens and bytes per report: GitHub batches matches far below both. */
export const MAX_TOKENS = 1000;
export const MAX_REPORT_BYTES = 1024 * 1024;

// `source` came later than the rest (older reports lack it); `url` is kept optional alike.
// Fields GitHub may add are ignored.
const reportedToken = z.object({
  token: z.string().min(1).max(4096),
  type: z.string().max(256),
  url: z.string().max(8192).default(''),
  source: z.string().max(256).default(''),
});
export type ReportedToken = z.infer<typeof reportedToken>;
const report = z.array(reportedToken).min(1).max(MAX_TOKENS);

/** The report's tokens, or which error refuses it. */
export function parseReport(body: Buffer): ReportedToken[] | 'too_many_tokens' | 'invalid_report' {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return 'invalid_report';
  }
  if (Array.isArray(json) && json.length > MAX_TOKENS) return 'too_many_tokens';
  const parsed = report.safeParse(json);
  return parsed.success ? parsed.data : 'invalid_report';
}

export type Label = 'true_positive' | 'false_positive';

/** GitHub's answer for one token: the token only as its SHA-256, as GitHub's partners answer. */
export interface TokenLabel {
  token_hash: string;
  token_type: string;
  label: Label;
}

export const labelOf = (t: ReportedToken, live: boolean): TokenLabel => ({
  token_hash: createHash('sha256').update(t.token).digest('hex'),
  token_type: t.type,
  label: live ? 'true_positive' : 'false_positive',
});
