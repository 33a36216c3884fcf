import { z } from 'zod';
import { GatewayError } from '../failures.js';
import type { BillingEvent, BillingStore } from '../store/store.js';
import type { Audit } from './audit.js';

// One event, or every failed one by saying so: an empty or mistyped request retries nothing.
export const retryInput = z
  .strictObject({
    exporter: z.string().min(1).max(32).optional(),
    id: z.string().min(1).max(300).optional(),
    all: z.literal(true, 'expected true (to retry every failed event)').optional(),
  })
  .superRefine((r, ctx) => {
    if (r.id === undefined && r.all === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['id'],
        message: 'expected id (one event) or all: true (every failed one)',
      });
    if (r.id !== undefined && r.all !== undefined)
      ctx.addIssue({ code: 'custom', path: ['all'], message: 'expected id or all, not both' });
  });
export const noQuery = z.strictObject({});
export const failuresQuery = z.strictObject({ exporter: z.string().min(1).max(32).optional() });

/** A usage event as operators see it. */
export interface BillingEventView {
  id: string;
  exporter: string;
  account_id: string;
  subject: string;
  requests: number;
  timestamp: string;
  attempts: number;
  last_error: string | null;
  failed_at: string | null;
}

const view = (e: BillingEvent): BillingEventView => ({
  id: e.id,
  exporter: e.exporter,
  account_id: e.account_id,
  subject: e.subject,
  requests: e.value,
  timestamp: new Date(e.timestamp_ms).toISOString(),
  attempts: e.attempts,
  last_error: e.last_error,
  failed_at: e.failed_at_ms === null ? null : new Date(e.failed_at_ms).toISOString(),
});

/** The billing exporters' failures for the admin API and the CLI: listed, and sent again on request. */
export class BillingOperations {
  constructor(
    private readonly billing: BillingStore,
    /** The configured exporters' names. */
    private readonly exporters: string[],
    private readonly audit: Audit,
  ) {}

  /** Events a receiver refused for good (a 4xx other than 429), oldest first. */
  async failures({ exporter }: z.infer<typeof failuresQuery>): Promise<{ failures: BillingEventView[] }> {
    const out: BillingEvent[] = [];
    for (const name of this.names(exporter))
      out.push(...(await this.billing.billingOutstanding(name)).filter((e) => e.failed_at_ms !== null));
    out.sort((a, b) => (a.failed_at_ms ?? 0) - (b.failed_at_ms ?? 0));
    return { failures: out.map(view) };
  }

  /** Failed events back in the outbox, sent unchanged at the exporter's next tick. */
  /** Its query is checked too (`noQuery`): a parameter given by mistake is named, not ignored. */
  async retry({ exporter, id }: z.infer<typeof retryInput>, from: string): Promise<{ retried: number }> {
    let retried = 0;
    for (const name of this.names(exporter)) retried += await this.billing.billingRetry(name, id ?? null);
    if (id !== undefined && retried === 0) throw new GatewayError('NOT_FOUND', `no failed billing event ${id}`);
    this.audit({ action: 'billing.retry', from, after: { exporter: exporter ?? null, id: id ?? null, retried } });
    return { retried };
  }

  private names(exporter: string | undefined): string[] {
    if (exporter === undefined) return this.exporters;
    if (!this.exporters.includes(exporter))
      throw new GatewayError(
        'BAD_REQUEST',
        `exporter: no exporter named "${exporter}" (configured: ${this.exporters.join(', ') || 'none'})`,
      );
    return [exporter];
  }
}
