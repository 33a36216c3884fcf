/**
 * The public page at `/`: current prices, the history chart, a usage check and the API docs.
 * The HTML is rendered once per price set (like the envelopes) and holds no JSON of prices; its
 * script and style are files of the same origin, so the CSP allows nothing inline.
 */

import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { type Encoded, encodeAsync } from '../../http/encoding.js';
import { EntityTags } from '../../http/etag.js';
import type { OpenApiDocument } from '../../http/openapi.js';
import { fixedHeaders, Whole } from '../../http/prebuilt.js';
import { regionDeltas } from '../../prices/changes.js';
import { PRODUCTS, type PriceSet, REGIONS } from '../../prices/price-set-schema.js';
import type { Snapshot } from '../../prices/snapshot.js';
import { staleAt } from '../../prices/staleness.js';
import { historyHtml } from './chart.js';
import { apiDocsHtml } from './docs.js';
import { esc } from './html.js';

export const PAGE_CSP = "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PRODUCT_NAMES: Record<(typeof PRODUCTS)[number], string> = {
  petrol_93: 'Petrol 93<span class="basis"> (pump)</span>',
  petrol_95: 'Petrol 95<span class="basis"> (pump)</span>',
  diesel_50ppm: 'Diesel 50ppm<span class="basis"> (wholesale)</span>',
  diesel_500ppm: 'Diesel 500ppm<span class="basis"> (wholesale)</span>',
};

/** A change in cents as the page shows it: "+12 c", "−99 c", "0 c", or a dash without one. */
const changeText = (c: number | null): string =>
  c === null ? '–' : `${c > 0 ? '+' : c < 0 ? '\u2212' : ''}${Math.abs(c)} c`;

/** The set before the current one in the history: what changes.php measures the change against. */
function previousOf(snap: Snapshot, set: PriceSet): PriceSet | undefined {
  const i = snap.history.findIndex((e) => e.set.effective_date === set.effective_date);
  return i > 0 ? snap.history[i - 1]?.set : undefined;
}

function pricesTable(snap: Snapshot): string {
  const set = snap.current?.set ?? null;
  const previous = set ? previousOf(snap, set) : undefined;
  const changes = Object.fromEntries(
    REGIONS.map((r) => [r, set ? regionDeltas(previous, set, r) : PRODUCTS.map(() => null)]),
  );
  const rows = PRODUCTS.map((p, i) => {
    const cells = REGIONS.map(
      (r) =>
        `<td data-price="${r}.${p}">${esc(set?.[r][p] ?? '–')}</td>` +
        `<td data-change="${r}.${p}">${changeText(changes[r]?.[i] ?? null)}</td>`,
    ).join('');
    return `<tr><th scope="row">${PRODUCT_NAMES[p]}</th>${cells}</tr>`;
  }).join('');
  const when = set
    ? `<p>In effect from 00:01 on <time datetime="${esc(set.effective_date)}">${esc(set.effective_date)}</time>, South African time.` +
      (previous
        ? ` Change: cents per litre since ${esc(previous.effective_date)}, the set before, as <code>changes.php</code> gives it.</p>`
        : '</p>')
    : '<p>No price set is in effect yet.</p>';
  return (
    `${when}<table class="prices"><thead><tr><th scope="col">Rand per litre</th><th scope="col">Coastal<span class="basis"> (zone 1A)</span></th>` +
    `<th scope="col">Change</th><th scope="col">Inland<span class="basis"> (zone 9C)</span></th><th scope="col">Change</th></tr></thead><tbody>${rows}</tbody></table>${ZONES}`
  );
}

// Which towns the two regional prices are (data/prices/ZONES.md), so a reader elsewhere knows the figure is not theirs.
const ZONES =
  '<p class="note zones"><strong>Where these prices apply.</strong> Coastal is the regulated price of magisterial ' +
  'zone 1A: Cape Town, Durban, Gqeberha (Port Elizabeth), East London and Mossel Bay. Inland is zone 9C: Gauteng ' +
  'and beyond, such as Sasolburg, Rustenburg, Witbank (eMalahleni), Potchefstroom and Klerksdorp. Every other town ' +
  'is in another of the 54 zones, whose prices differ by the cost of transport there: George (zone 3A), Paarl and ' +
  'Stellenbosch (2A), Knysna (4A), Richards Bay (5A), Pietermaritzburg (3B), Bloemfontein (11C) and Polokwane (12C) ' +
  'do not pay these figures. Gqeberha was priced off the coastal zone from 2 October 2024, after damage to its ' +
  'tanker berth. Per-zone prices are not available here, so <code>zone</code> is null.</p>';

/** Shown while the prices are older than `prices.max_age_days` (as /readyz reports them). */
function staleNotice(snap: Snapshot, maxAgeDays: number): string {
  const date = esc(snap.current?.set.effective_date ?? '');
  return (
    `<p class="stale" role="status">These prices took effect on <time datetime="${date}">${date}</time>, more than ` +
    `${maxAgeDays} days ago: newer official prices may have been published that this gateway has not received yet.</p>`
  );
}

const USAGE_BOX =
  '<div class="usage"><label for="usage-key">API key</label>' +
  '<input id="usage-key" type="password" autocomplete="off" spellcheck="false" placeholder="fpg_…">' +
  '<button id="usage-check" type="button">Check usage</button></div>' +
  '<div id="usage-result" aria-live="polite"></div>' +
  '<p class="note">Not counted. The key is sent in the <code>X-API-Key</code> header to usage.php and usage-history.php and is never put in a URL, stored or kept in a cookie.</p>';

const HTML = 'text/html; charset=utf-8';
const PAGE_HEADERS = fixedHeaders('no-cache', 'Content-Security-Policy', PAGE_CSP, 'Referrer-Policy', 'no-referrer');
const NOT_YET = { gzip: null, br: null };

/** A snapshot's page as it is while fresh, or once stale: its bytes, then their compressed forms. */
interface Variant {
  html: Buffer;
  encoded: Encoded | null;
  /** The most compressed bytes are in `encoded`: the fast ones, done later, do not replace them. */
  best?: true;
  /** The answer: made at the first request, and again once the compressed bytes are here. */
  answer?: Whole;
}

/** Per price set, the page as it is while the set is fresh and once it is stale. */
interface Pages {
  fresh?: Variant;
  stale?: Variant;
}

// The pages of the snapshot in effect and the one before, for the answers still being sent.
const KEPT = 2;

/**
 * A page's compressed forms, in two steps: fast (brotli 5, gzip 6: a few ms on the thread pool) as
 * its set comes into effect, and the most compressed (brotli 10: 0.15–0.3 s of CPU for the 290 KB
 * page, 28.6 KB against 37.4) once the set has been in effect `bestAfterMs`. A gateway starting
 * (a restart, a scale-out under load) spends its first moments serving, not saving 9 KB a page,
 * and one that lives a few seconds (a test's, a CLI's) never pays for it.
 */
interface Compressed {
  fast: Promise<Encoded>;
  best?: Promise<Encoded>;
}

/**
 * By their HTML, for the process: gateways that share one (the tests' in-process gateways, an
 * app restarted in place) compress the same page once.
 */
const compressions = new LRUCache<string, Compressed>({ max: KEPT });

/** The history chart by snapshot tag, for the process, as the compressed bytes above. */
const charts = new LRUCache<string, string>({ max: KEPT });

function chartOf(snap: Snapshot): string {
  let chart = charts.get(snap.tag);
  if (chart === undefined) {
    chart = historyHtml(snap.history.map((e) => e.set));
    charts.set(snap.tag, chart);
  }
  return chart;
}

function compressed(html: string): Compressed {
  let made = compressions.get(html);
  if (!made) {
    made = { fast: encodeAsync(Buffer.from(html), 'fast') };
    made.fast.catch(() => compressions.delete(html));
    compressions.set(html, made);
  }
  return made;
}

/** The most compressed form, made once per HTML: none when it cannot be (for want of memory). */
function best(html: string, made: Compressed): Promise<Encoded> {
  made.best ??= encodeAsync(Buffer.from(html), 'max');
  made.best.catch(() => (made.best = undefined));
  return made.best;
}

export interface PublicPageOptions {
  /**
   * The API document, built from every route the features hand over, this page's among them;
   * so it is read at the first render, once every route is known.
   */
  document: () => OpenApiDocument;
  /** The configured time zone, whose days the usage chart shows. */
  zone: string;
  maxAgeDays: number;
  log: Logger;
  /** How long a set is in effect before its page gets the most compressed bytes (60 s). */
  bestAfterMs?: number;
}

export class PublicPage {
  /** By snapshot tag: a reload that rebuilds the same prices (a store announcement) reuses the page. */
  private readonly pages = new LRUCache<string, Pages>({ max: KEPT });
  private docsHtml: string | null = null;

  private readonly bestAfterMs: number;

  constructor(private readonly o: PublicPageOptions) {
    this.bestAfterMs = o.bestAfterMs ?? 60_000;
  }

  /**
   * Builds the page of a snapshot coming into effect at `now` (at start, on each price set), and
   * compresses it on libuv's thread pool (`Compressed`), which neither a request nor the event
   * loop waits for. Until it is made (or if it cannot be, for want of memory) the page is answered
   * uncompressed.
   */
  prepare(snap: Snapshot, now: number): void {
    const current = snap.current;
    try {
      this.variant(snap, current !== null && staleAt(current.effectiveMs, this.o.maxAgeDays, now));
    } catch (err) {
      // Its first request renders it again, and answers the failure.
      this.o.log.error({ err }, 'building the public page failed');
    }
  }

  /**
   * The page of a snapshot, built once while the set is fresh and once when it is stale.
   * `etag`: the snapshot's at this moment, which tells which (http/etag.ts).
   */
  render(snap: Snapshot, etag: string): Whole {
    const v = this.variant(snap, EntityTags.stale(etag));
    if (v.answer?.etag !== etag)
      v.answer = v.encoded
        ? new Whole({ contentType: HTML, body: v.html, fixed: PAGE_HEADERS, etag, encoded: v.encoded })
        : new Whole({ contentType: HTML, body: v.html, fixed: PAGE_HEADERS, etag, encoded: NOT_YET, varies: true });
    return v.answer;
  }

  private variant(snap: Snapshot, stale: boolean): Variant {
    let pages = this.pages.get(snap.tag);
    if (!pages) {
      pages = {};
      this.pages.set(snap.tag, pages);
    }
    const known = stale ? pages.stale : pages.fresh;
    if (known) return known;
    const html = this.html(snap, stale);
    const v: Variant = { html: Buffer.from(html), encoded: null };
    if (stale) pages.stale = v;
    else pages.fresh = v;
    this.compress(v, html, stale);
    return v;
  }

  private compress(v: Variant, html: string, stale: boolean): void {
    const made = compressed(html);
    const started = performance.now();
    const take = (effort: 'fast' | 'max') => (encoded: Encoded) => {
      if (v.best) return;
      if (effort === 'max') v.best = true;
      v.encoded = encoded;
      v.answer = undefined;
      const ms = Math.round(performance.now() - started);
      this.o.log.info({ bytes: v.html.length, br: encoded.br?.length, ms, stale, effort }, 'public page compressed');
    };
    // Not made (no memory for it): the page goes on as it is.
    const kept = () => undefined;
    if (made.best) return void made.best.then(take('max'), kept);
    made.fast.then(take('fast'), kept);
    setTimeout(() => {
      if ([...this.pages.values()].some((p) => p.fresh === v || p.stale === v))
        best(html, made).then(take('max'), kept);
    }, this.bestAfterMs).unref();
  }

  private html(snap: Snapshot, stale: boolean): string {
    return (
      '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
      '<meta name="viewport" content="width=device-width, initial-scale=1"><title>Fuel Price Gateway</title>' +
      '<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="/assets/page.css">' +
      '<script type="module" src="/assets/page.js"></script></head><body>' +
      '<header><h1>South African fuel prices</h1><p>Official regional reference prices in Rand per litre: ' +
      'pump prices for petrol, wholesale list prices for diesel. An API for fleet, logistics, ERP and analytics integrations.</p></header><main>' +
      `<section id="current"><h2>Current prices</h2>${stale ? staleNotice(snap, this.o.maxAgeDays) : ''}${pricesTable(snap)}</section>` +
      `<section id="history"><h2>History</h2>${chartOf(snap)}` +
      '<p class="note">Coastal: solid lines, filled markers. Inland: dashed lines, hollow markers. Hover over the chart, ' +
      'or focus it and use the arrow keys, to read a month. A gap: no confirmed official price for that product and region.</p></section>' +
      `<section id="usage" data-zone="${esc(this.o.zone)}"><h2>Check your usage</h2>${USAGE_BOX}</section>` +
      `<section id="docs"><h2>API</h2>${this.docs()}</section>` +
      '</main></body></html>'
    );
  }

  private docs(): string {
    this.docsHtml ??= apiDocsHtml(this.o.document());
    return this.docsHtml;
  }
}
