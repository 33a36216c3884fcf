/**
 * The history chart of the public page: inline SVG drawn by hand, one path per region and
 * product, with date and Rand axes and a legend. Drawn once per price set. Colours and dashes
 * are SVG attributes, not inline styles, so the page's CSP (no inline style) holds.
 */
import { cents } from '../../prices/changes.js';
import { PRODUCTS, type PriceSet, REGIONS } from '../../prices/schema.js';
import { esc } from './html.js';

const W = 900;
const H = 380;
const M = { left: 56, right: 16, top: 16, bottom: 36 };
const LEGEND_H = 48;
const COLOURS: Record<(typeof PRODUCTS)[number], string> = {
  petrol_93: '#1b6ac9',
  petrol_95: '#c23b22',
  diesel_50ppm: '#2e8b57',
  diesel_500ppm: '#8a5a00',
};
const LABELS: Record<(typeof PRODUCTS)[number], string> = {
  petrol_93: 'Petrol 93',
  petrol_95: 'Petrol 95',
  diesel_50ppm: 'Diesel 50ppm',
  diesel_500ppm: 'Diesel 500ppm',
};
/** Inland series are dashed, coastal solid. */
const DASH: Record<(typeof REGIONS)[number], string> = { coastal: '', inland: ' stroke-dasharray="6 4"' };

const dayMs = (date: string): number => Date.parse(`${date}T00:00:00Z`);
const fixed = (n: number): string => n.toFixed(1);

export function chartSvg(history: readonly PriceSet[]): string {
  if (history.length === 0) return '<p>No price history yet.</p>';
  const all = history.flatMap((s) => REGIONS.flatMap((r) => PRODUCTS.map((p) => s[r][p]))).filter((v) => v !== null);
  const low = Math.floor(Math.min(...all.map(cents)) / 100);
  const high = Math.max(low + 1, Math.ceil(Math.max(...all.map(cents)) / 100));
  const t0 = dayMs((history[0] as PriceSet).effective_date);
  const t1 = Math.max(t0 + 1, dayMs((history[history.length - 1] as PriceSet).effective_date));
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const x = (date: string): number => M.left + ((dayMs(date) - t0) / (t1 - t0)) * plotW;
  const y = (rand: number): number => M.top + (1 - (rand - low) / (high - low)) * plotH;

  const parts: string[] = [];
  const step = high - low > 8 ? 2 : 1;
  for (let r = low; r <= high; r += step) {
    parts.push(
      `<line class="grid" x1="${M.left}" x2="${W - M.right}" y1="${fixed(y(r))}" y2="${fixed(y(r))}"/>`,
      `<text class="tick" x="${M.left - 6}" y="${fixed(y(r) + 4)}" text-anchor="end">R${r}</text>`,
    );
  }
  const firstYear = Number((history[0] as PriceSet).effective_date.slice(0, 4));
  const lastYear = Number((history[history.length - 1] as PriceSet).effective_date.slice(0, 4));
  for (let year = firstYear + 1; year <= lastYear; year++) {
    const xv = fixed(x(`${year}-01-01`));
    parts.push(
      `<line class="grid" x1="${xv}" x2="${xv}" y1="${M.top}" y2="${H - M.bottom}"/>`,
      `<text class="tick" x="${xv}" y="${H - M.bottom + 16}" text-anchor="middle">${year}</text>`,
    );
  }
  parts.push(
    `<line class="axis" x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${H - M.bottom}"/>`,
    `<line class="axis" x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}"/>`,
    `<text class="tick" x="${M.left}" y="${H - 4}">${esc((history[0] as PriceSet).effective_date)}</text>`,
    `<text class="tick" x="${W - M.right}" y="${H - 4}" text-anchor="end">${esc((history[history.length - 1] as PriceSet).effective_date)}</text>`,
    `<text class="tick" x="4" y="${M.top + 4}">Rand/litre</text>`,
  );
  REGIONS.forEach((region, ri) => {
    PRODUCTS.forEach((product, pi) => {
      let d = '';
      let points = 0;
      let gap = true;
      for (const set of history) {
        const price = set[region][product];
        if (price === null) {
          gap = true;
          continue;
        }
        d += `${gap ? 'M' : 'L'}${fixed(x(set.effective_date))} ${fixed(y(cents(price) / 100))}`;
        gap = false;
        points++;
      }
      const name = `${region}.${product}`;
      const label = `${LABELS[product]}, ${region}`;
      parts.push(
        `<path class="series" data-series="${name}" data-points="${points}" d="${d || 'M0 0'}" fill="none" stroke="${COLOURS[product]}" stroke-width="2"${DASH[region]}><title>${esc(label)}</title></path>`,
      );
      const lx = M.left + pi * 200;
      const ly = H + 18 + ri * 22;
      parts.push(
        `<line x1="${lx}" x2="${lx + 28}" y1="${ly - 4}" y2="${ly - 4}" stroke="${COLOURS[product]}" stroke-width="3"${DASH[region]}/>`,
        `<text class="legend" x="${lx + 34}" y="${ly}">${esc(label)}</text>`,
      );
    });
  });
  return (
    `<svg class="chart" viewBox="0 0 ${W} ${H + LEGEND_H}" role="img" aria-labelledby="chart-title">` +
    `<title id="chart-title">Fuel prices per litre, ${esc((history[0] as PriceSet).effective_date)} to ${esc((history[history.length - 1] as PriceSet).effective_date)}</title>` +
    `${parts.join('')}</svg>`
  );
}
