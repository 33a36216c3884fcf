import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Config } from '../config/config-schema.js';
import type { AccountStore, BillingEvent, BillingStore, CoordinationStore } from '../store/store.js';
import type { Outcome } from './send-outcome.js';
import type { Sender } from './senders.js';

const LEASE = 'billing-export';
// Who took the lease last, and whether it gave it up: the lease itself is gone once it expires.
const HOLDER_NOTE = 'billing-export-holder';
const holderNote = z.object({ holder: z.string(), since: z.string(), released: z.boolean() });

/** The holder note as written by `noteHolder`; null when there is none, or one this release cannot read. */
function readHolder(raw: string | null): z.infer<typeof holderNote> | null {
  try {
    return raw === null ? null : (holderNote.safeParse(JSON.parse(raw)).data ?? null);
  } catch {
    return null;
  }
}
const PAGE = 200;
// Requests in flight per exporter: Stripe's live mode takes about 1,000 events a second.
const IN_FLIGHT = 8;
// Backoff of an event the receiver did not take, doubled per attempt, with ±20% jitter.
const FIRST_RETRY_MS = 5000;
const MAX_RETRY_MS = 3_600_000;

/** What the exporter reports to the metrics. */
export interface BillingMetrics {
  billingSent(exporter: string, events: number): void;
  billingFailed(exporter: string, events: number): void;
  billingLag(exporter: string, seconds: number): void;
}

export interface ExporterDeps {
  accounts: Pick<AccountStore, 'listAccounts'>;
  billing: BillingStore;
  coordination: Pick<CoordinationStore, 'lease' | 'releaseLease' | 'getNote' | 'putNote'>;
}

/** The parts of a BillingExporter: its constructor's options. */
export interface BillingExporterOptions {
  deps: ExporterDeps;
  cfg: Config['billing'];
  senders: Sender[];
  metrics: BillingMetrics;
  log: Logger;
  now: () => number;
}

/**
 * Pushes the usage ledger to billing systems, off the hot path: every `interval_s`, for each
 * exporter and account, the growth of the ledger since the account's last event becomes one event,
 * written to the store before it is sent and sent unchanged until the receiver takes it
 * (store/billing/cursor.ts). Between passes, events not yet taken are sent again when due. One
 * gateway at a time does it, under a lease; a second one sending too (a lease lost mid-pass)
 * sends the same events, which the receivers drop.
 */
export class BillingExporter {
  // Names the gateway in the log lines of a takeover: host, process, and this exporter's run.
  private readonly holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private holding = false;
  /** When this gateway last took the lease (ISO), for the holder note. */
  private since = '';
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private lastPass = Number.NEGATIVE_INFINITY;
  private stopped = false;
  private readonly abort = new AbortController();

  private readonly deps: ExporterDeps;
  private readonly cfg: Config['billing'];
  private readonly senders: Sender[];
  private readonly metrics: BillingMetrics;
  private readonly log: Logger;
  private readonly now: () => number;

  constructor(o: BillingExporterOptions) {
    this.deps = o.deps;
    this.cfg = o.cfg;
    this.senders = o.senders;
    this.metrics = o.metrics;
    this.log = o.log;
    this.now = o.now;
    const { cfg } = o;
    this.intervalMs = cfg.interval_s * 1000;
  }

  start(): void {
    if (this.senders.length === 0) return;
    const tickMs = Math.min(5000, Math.max(1000, this.intervalMs / 5));
    const tick = (): void => {
      this.running ??= this.tick(tickMs).finally(() => {
        this.running = null;
      });
    };
    this.timer = setInterval(tick, tickMs);
    this.timer.unref();
    tick();
  }

  /** Ends the loop: a send under way is given up (its event is sent again by whoever passes next). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.abort.abort();
    await this.running;
    if (this.holding) await this.noteHolder(true).catch(() => undefined);
    await this.deps.coordination.releaseLease(LEASE, this.holder).catch(() => undefined);
  }

  private async tick(tickMs: number): Promise<void> {
    try {
      if (!(await this.hold(tickMs))) return;
      const boundary = Math.floor(this.now() / this.intervalMs) * this.intervalMs;
      for (const sender of this.senders) {
        if (boundary > this.lastPass) await this.pass(sender, boundary, tickMs);
        await this.resend(sender);
      }
      if (boundary > this.lastPass) this.lastPass = boundary;
    } catch (err) {
      this.log.warn(
        { err },
        'billing export: pass interrupted (the store is unavailable?); it goes on at the next tick',
      );
    }
  }

  private async hold(tickMs: number): Promise<boolean> {
    const held = await this.deps.coordination
      .lease(LEASE, this.holder, Math.max(15_000, tickMs * 3))
      .catch(() => false);
    if (held && !this.holding) await this.took().catch(() => undefined);
    this.holding = held;
    return held;
  }

  /**
   * Says who exports now, and from whom: a gateway that takes the lease over from one that
   * stopped renewing it without giving it up (killed, hung, cut off from the store) warns, as
   * the events that one was sending are sent again from here.
   */
  private async took(): Promise<void> {
    const before = readHolder(await this.deps.coordination.getNote(HOLDER_NOTE));
    this.since = new Date(this.now()).toISOString();
    if (before !== null && before.holder !== this.holder && !before.released)
      this.log.warn(
        { holder: this.holder, from: before.holder, from_since: before.since },
        'billing export: this gateway took over the lease from another that stopped renewing it (killed, hung or cut off from the store); it sends from here on, events not yet taken included',
      );
    else
      this.log.info(
        { holder: this.holder, from: before?.holder ?? null },
        'billing export: this gateway took the lease; it sends from here on',
      );
    await this.noteHolder(false);
  }

  private noteHolder(released: boolean): Promise<void> {
    const note = { holder: this.holder, since: this.since, released };
    return this.deps.coordination.putNote(HOLDER_NOTE, JSON.stringify(note));
  }

  /** Every account's growth as events (written first), and each sent. */
  private async pass(sender: Sender, boundary: number, tickMs: number): Promise<void> {
    let after: string | null = null;
    do {
      if (this.stopped || !(await this.hold(tickMs))) return;
      const page = await this.deps.accounts.listAccounts({}, after, PAGE);
      const due: BillingEvent[] = [];
      for (const account of page.accounts) {
        const subject = sender.subjectOf(account);
        if (subject === null) continue;
        const events = await this.deps.billing.billingPrepare(sender.name, account.id, subject, boundary);
        due.push(...events.filter((e) => e.next_attempt_ms <= this.now()));
      }
      await this.sendAll(sender, due);
      after = page.next;
    } while (after !== null);
  }

  /** Events not yet taken (of every account, deleted ones too), sent again once due. */
  private async resend(sender: Sender): Promise<void> {
    const outstanding = await this.deps.billing.billingOutstanding(sender.name);
    const waiting = outstanding.filter((e) => e.failed_at_ms === null);
    const oldest = Math.min(...waiting.map((e) => e.timestamp_ms));
    this.metrics.billingLag(sender.name, waiting.length === 0 ? 0 : Math.max(0, (this.now() - oldest) / 1000));
    await this.sendAll(
      sender,
      waiting.filter((e) => e.next_attempt_ms <= this.now()),
    );
  }

  private async sendAll(sender: Sender, events: BillingEvent[]): Promise<void> {
    const batches: BillingEvent[][] = [];
    for (let i = 0; i < events.length; i += sender.batch) batches.push(events.slice(i, i + sender.batch));
    const work = async (): Promise<void> => {
      for (let batch = batches.shift(); batch !== undefined && !this.stopped; batch = batches.shift())
        await this.settle(sender, batch, await sender.send(batch, this.cfg.timeout_ms, this.now(), this.abort.signal));
    };
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, batches.length) }, work));
  }

  private async settle(sender: Sender, batch: BillingEvent[], outcome: Outcome): Promise<void> {
    const { billing } = this.deps;
    if (this.stopped && outcome.kind !== 'taken') return;
    if (outcome.kind === 'taken') {
      for (const e of batch) await billing.billingAck(e);
      this.metrics.billingSent(sender.name, batch.length);
      return;
    }
    if (outcome.kind === 'refused') {
      for (const e of batch) await billing.billingFail(e, this.now(), outcome.error);
      this.metrics.billingFailed(sender.name, batch.length);
      this.log.warn(
        { exporter: sender.name, events: batch.map((e) => e.id), error: outcome.error },
        'billing export: events refused for good (by the receiver, or its address by the gateway); listed by `billing failures`, sent again by `billing retry`',
      );
      return;
    }
    for (const e of batch) {
      // The receiver's Retry-After when it gives one; else a backoff doubling per attempt.
      const backoff = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** e.attempts) * (0.8 + Math.random() * 0.4);
      await billing.billingDefer(e, this.now() + (outcome.afterMs ?? backoff), outcome.error);
    }
    this.log.info(
      { exporter: sender.name, events: batch.length, error: outcome.error },
      'billing export: not taken this time; sent again later',
    );
  }
}
