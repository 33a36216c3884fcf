/**
 * The public page at `/`: current prices, the history chart, a usage check and the API docs.
 * The HTML is rendered once per price set (like the envelopes) and holds no JSON of prices; its
 * script and style are files of the same origin, so the CSP allows nothing inline.
 */

import { EntityTags } from '../../http/etag.js';
import type { OpenApiDocument } from '../../http/openapi.js';
import { fixedHeaders, Whole } from '../../http/whole.js';
import { PRODUCTS, REGIONS } from '../../prices/schema.js';
import type { Snapshot } from '../../prices/snapshot.js';
import { chartSvg } from './chart.js';
import { apiDocsHtml } from './docs.js';
import { esc } from './html.js';

export const PAGE_CSP = "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PRODUCT_NAMES: Record<(typeof PRODUCTS)[number], string> = {
  petrol_93: 'Petrol 93 (pump)',
  petrol_95: 'Petrol 95 (pump)',
  diesel_50ppm: 'Diesel 50ppm (wholesale)',
  diesel_500ppm: 'Diesel 500ppm (wholesale)',
};

function pricesTable(snap: Snapshot): string {
  const set = snap.current?.set ?? null;
  const rows = PRODUCTS.map((p) => {
    const cells = REGIONS.map((r) => `<td data-price="${r}.${p}">${esc(set?.[r][p] ?? '–')}</td>`).join('');
    return `<tr><th scope="row">${PRODUCT_NAMES[p]}</th>${cells}</tr>`;
  }).join('');
  const when = set
    ? `<p>In effect from 00:01 on <time datetime="${esc(set.effective_date)}">${esc(set.effective_date)}</time>, South African time.</p>`
    : '<p>No price set is in effect yet.</p>';
  return (
    `${when}<table class="prices"><thead><tr><th scope="col">Rand per litre</th><th scope="col">Coastal</th>` +
    `<th scope="col">Inland (Gauteng)</th></tr></thead><tbody>${rows}</tbody></table>`
  );
}

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

export class PublicPage {
  /** Per price set, the page as it is while the set is fresh and once it is stale. */
  private readonly pages = new WeakMap<Snapshot, { fresh?: Whole; stale?: Whole }>();
  private docsHtml: string | null = null;

  /**
   * `document`: the API document, built from every route the features hand over, this page's
   * among them; so it is read at the first render, once every route is known. `zone`: the
   * configured time zone, whose days the usage chart shows.
   */
  constructor(
    private readonly document: () => OpenApiDocument,
    private readonly zone: string,
    private readonly maxAgeDays: number,
  ) {}

  /**
   * The page of a snapshot, rendered once while the set is fresh and once when it is stale.
   * `etag`: the snapshot's at this moment, which tells which (http/etag.ts).
   */
  render(snap: Snapshot, etag: string): Whole {
    const stale = EntityTags.stale(etag);
    let pages = this.pages.get(snap);
    if (!pages) {
      pages = {};
      this.pages.set(snap, pages);
    }
    let page = stale ? pages.stale : pages.fresh;
    if (!page) {
      const headers = fixedHeaders('no-cache', 'Content-Security-Policy', PAGE_CSP, 'Referrer-Policy', 'no-referrer');
      page = new Whole('text/html; charset=utf-8', this.html(snap, stale), headers, etag);
      if (stale) pages.stale = page;
      else pages.fresh = page;
    }
    return page;
  }

  private html(snap: Snapshot, stale: boolean): string {
    return (
      '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
      '<meta name="viewport" content="width=device-width, initial-scale=1"><title>Fuel Price Gateway</title>' +
      '<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="/assets/page.css">' +
      '<script type="module" src="/assets/page.js"></script></head><body>' +
      '<header><h1>South African fuel prices</h1><p>Official regional reference prices in Rand per litre: ' +
      'pump prices for petrol, wholesale list prices for diesel. An API for fleet, logistics, ERP and analytics integrations.</p></header><main>' +
      `<section id="current"><h2>Current prices</h2>${stale ? staleNotice(snap, this.maxAgeDays) : ''}${pricesTable(snap)}</section>` +
      `<section id="history"><h2>History</h2>${chartSvg(snap.history.map((e) => e.set))}` +
      '<p class="note">Solid lines coastal, dashed lines inland. A gap: no official price for that product and region.</p></section>' +
      `<section id="usage" data-zone="${esc(this.zone)}"><h2>Check your usage</h2>${USAGE_BOX}</section>` +
      `<section id="docs"><h2>API</h2>${this.docs()}</section>` +
      '</main></body></html>'
    );
  }

  private docs(): string {
    this.docsHtml ??= apiDocsHtml(this.document());
    return this.docsHtml;
  }
}
