/**
 * The history chart of the public page: inline SVG drawn by hand, rendered once per price set.
 * Three ranges (1 y, 5 y, all), each drawn twice: wide for a desktop and narrow for a phone,
 * so the text stays legible without scaling down (CSS shows one). The eight series differ by
 * colour and marker shape (product) and by marker fill and dash (region), named in an HTML
 * legend. Each month has an invisible hit area carrying its eight prices, which page.js shows on
 * hover and on keyboard focus. Colours are SVG attributes, not inline styles, for the CSP.
 */
import { cents } from '../../prices/changes.js';
import { PRODUCTS, type PriceSet, REGIONS } from '../../prices/price-set-schema.js';
import { esc } from './html.js';

type Product = (typeof PRODUCTS)[number];
type Region = (typeof REGIONS)[number];

const COLOURS: Record<Product, string> = {
  petrol_93: '#1b6ac9',
  petrol_95: '#c23b22',
  diesel_50ppm: '#2e8b57',
  diesel_500ppm: '#8a5a00',
};
const SHAPES: Record<Product, string> = {
  petrol_93: 'circle',
  petrol_95: 'square',
  diesel_50ppm: 'triangle',
  diesel_500ppm: 'diamond',
};
export const SERIES_LABELS: Record<Product, string> = {
  petrol_93: 'Petrol 93',
  petrol_95: 'Petrol 95',
  diesel_50ppm: 'Diesel 50ppm',
  diesel_500ppm: 'Diesel 500ppm',
};
/** Inland: dashed line, hollow markers; coastal: solid line, filled markers. */
const DASH: Record<Region, string> = { coastal: '', inland: ' stroke-dasharray="6 4"' };
const fillOf = (region: Region, product: Product): string => (region === 'inland' ? '#fff' : COLOURS[product]);

interface Size {
  name: 'wide' | 'narrow';
  w: number;
  h: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}
const SIZES: readonly Size[] = [
  { name: 'wide', w: 900, h: 360, left: 52, right: 16, top: 12, bottom: 28 },
  { name: 'narrow', w: 330, h: 260, left: 38, right: 8, top: 10, bottom: 26 },
];
const RANGES = [
  { id: '1y', label: '1 y', years: 1 },
  { id: '5y', label: '5 y', years: 5 },
  { id: 'all', label: 'All', years: 0 },
] as const;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const dayMs = (date: string): number => Date.parse(`${date}T00:00:00Z`);
const f1 = (n: number): string => n.toFixed(1);

function marker(shape: string, x: number, y: number, attrs: string): string {
  switch (shape) {
    case 'circle':
      return `<circle cx="${f1(x)}" cy="${f1(y)}" r="3.6"${attrs}/>`;
    case 'square':
      return `<rect x="${f1(x - 3.2)}" y="${f1(y - 3.2)}" width="6.4" height="6.4"${attrs}/>`;
    case 'triangle':
      return `<path d="M${f1(x)} ${f1(y - 4.4)}L${f1(x + 4.2)} ${f1(y + 3)}L${f1(x - 4.2)} ${f1(y + 3)}Z"${attrs}/>`;
    default:
      return `<path d="M${f1(x)} ${f1(y - 4.6)}L${f1(x + 4.6)} ${f1(y)}L${f1(x)} ${f1(y + 4.6)}L${f1(x - 4.6)} ${f1(y)}Z"${attrs}/>`;
  }
}

/** The sets of a range: those dated on or after the same day `years` before the last set. */
function inRange(history: readonly PriceSet[], years: number): readonly PriceSet[] {
  const last = history[history.length - 1];
  if (years === 0 || !last) return history;
  const since = `${Number(last.effective_date.slice(0, 4)) - years}${last.effective_date.slice(4)}`;
  return history.filter((s) => s.effective_date >= since);
}

/** Labels along the date axis, at least `gap` px apart: years, or quarters over a short span. */
function dateTicks(first: string, last: string, plotW: number, gap: number): Array<[string, string]> {
  const y0 = Number(first.slice(0, 4));
  const y1 = Number(last.slice(0, 4));
  if (y1 - y0 >= 3) {
    const step = Math.max(1, Math.ceil(((y1 - y0 + 1) * gap) / plotW));
    const out: Array<[string, string]> = [];
    for (let y = y0 + 1; y <= y1; y++) if ((y - y0) % step === 0) out.push([`${y}-01-01`, String(y)]);
    return out;
  }
  const out: Array<[string, string]> = [];
  for (let y = y0; y <= y1; y++)
    for (const m of [0, 3, 6, 9]) {
      const date = `${y}-${String(m + 1).padStart(2, '0')}-01`;
      if (date > first && date <= last) out.push([date, `${MONTHS[m]} ${String(y).slice(2)}`]);
    }
  return out;
}

function svg(sets: readonly PriceSet[], size: Size, rangeLabel: string): string {
  const all = sets.flatMap((s) => REGIONS.flatMap((r) => PRODUCTS.map((p) => s[r][p]))).filter((v) => v !== null);
  const low = all.length === 0 ? 0 : Math.floor(Math.min(...all.map(cents)) / 100);
  const high = Math.max(low + 1, all.length === 0 ? 1 : Math.ceil(Math.max(...all.map(cents)) / 100));
  const first = (sets[0] as PriceSet).effective_date;
  const last = (sets[sets.length - 1] as PriceSet).effective_date;
  const t0 = dayMs(first);
  const t1 = Math.max(t0 + 1, dayMs(last));
  const plotW = size.w - size.left - size.right;
  const plotH = size.h - size.top - size.bottom;
  const bottom = size.h - size.bottom;
  const x = (date: string): number => size.left + ((dayMs(date) - t0) / (t1 - t0)) * plotW;
  const y = (rand: number): number => size.top + (1 - (rand - low) / (high - low)) * plotH;
  const parts: string[] = [];
  const step = Math.max(1, Math.ceil((high - low) / (size.name === 'wide' ? 8 : 5)));
  for (let r = low; r <= high; r += step)
    parts.push(
      `<line class="grid" x1="${size.left}" x2="${size.w - size.right}" y1="${f1(y(r))}" y2="${f1(y(r))}"/>`,
      `<text class="tick" x="${size.left - 5}" y="${f1(y(r) + 4)}" text-anchor="end">R${r}</text>`,
    );
  for (const [date, label] of dateTicks(first, last, plotW, size.name === 'wide' ? 48 : 44)) {
    const xv = f1(x(date));
    parts.push(
      `<line class="grid" x1="${xv}" x2="${xv}" y1="${size.top}" y2="${bottom}"/>`,
      `<text class="tick" x="${xv}" y="${bottom + 17}" text-anchor="middle">${label}</text>`,
    );
  }
  parts.push(
    `<line class="axis" x1="${size.left}" x2="${size.left}" y1="${size.top}" y2="${bottom}"/>`,
    `<line class="axis" x1="${size.left}" x2="${size.w - size.right}" y1="${bottom}" y2="${bottom}"/>`,
  );
  for (const region of REGIONS)
    for (const product of PRODUCTS) {
      const name = `${region}.${product}`;
      const points = sets.flatMap((s) => {
        const price = s[region][product];
        return price === null ? [null] : [[x(s.effective_date), y(cents(price) / 100)] as const];
      });
      let d = '';
      let gap = true;
      for (const pt of points) {
        if (pt) d += `${gap ? 'M' : 'L'}${f1(pt[0])} ${f1(pt[1])}`;
        gap = pt === null;
      }
      const present = points.filter((pt) => pt !== null);
      parts.push(
        `<path class="series" data-series="${name}" data-points="${present.length}" d="${d || 'M0 0'}" fill="none" stroke="${COLOURS[product]}" stroke-width="2"${DASH[region]}/>`,
      );
      // A marker every few points (a phone's width holds fewer), and always on the last one.
      const every = Math.max(1, Math.ceil((present.length * 26) / plotW));
      const attrs = ` data-marker="${name}" data-shape="${SHAPES[product]}" fill="${fillOf(region, product)}" stroke="${COLOURS[product]}" stroke-width="1.5"`;
      present.forEach((pt, i) => {
        if ((present.length - 1 - i) % every === 0) parts.push(marker(SHAPES[product], pt[0], pt[1], attrs));
      });
    }
  parts.push(`<line class="cursor" x1="0" x2="0" y1="${size.top}" y2="${bottom}" visibility="hidden"/>`);
  sets.forEach((s, i) => {
    const here = x(s.effective_date);
    const before = i === 0 ? size.left : (here + x((sets[i - 1] as PriceSet).effective_date)) / 2;
    const after =
      i === sets.length - 1 ? size.w - size.right : (here + x((sets[i + 1] as PriceSet).effective_date)) / 2;
    const values = REGIONS.flatMap((r) => PRODUCTS.map((p) => s[r][p] ?? '-')).join(' ');
    parts.push(
      `<rect class="hit" data-date="${esc(s.effective_date)}" data-x="${f1(here)}" data-v="${esc(values)}" x="${f1(before)}" y="${size.top}" width="${f1(Math.max(1, after - before))}" height="${plotH}" fill="#000" fill-opacity="0"/>`,
    );
  });
  const title = `Fuel prices per litre, ${rangeLabel}: ${first} to ${last}. Arrow keys step through the months.`;
  return (
    `<svg class="chart ${size.name}" viewBox="0 0 ${size.w} ${size.h}" role="img" tabindex="0" aria-label="${esc(title)}" aria-describedby="readout">` +
    `${parts.join('')}</svg>`
  );
}

function legend(): string {
  const items = REGIONS.flatMap((region) =>
    PRODUCTS.map((product) => {
      const sample =
        `<svg class="key" viewBox="0 0 32 12" aria-hidden="true"><line x1="2" x2="30" y1="6" y2="6" stroke="${COLOURS[product]}" stroke-width="2"${DASH[region]}/>` +
        `${marker(SHAPES[product], 16, 6, ` fill="${fillOf(region, product)}" stroke="${COLOURS[product]}" stroke-width="1.5"`)}</svg>`;
      return `<li>${sample}${SERIES_LABELS[product]}, ${region}</li>`;
    }),
  );
  return `<ul class="legend">${items.join('')}</ul>`;
}

/** The values page.js fills in on hover and focus; at first those of the last set. */
function readout(last: PriceSet): string {
  const rows = PRODUCTS.map(
    (p) =>
      `<tr><th scope="row">${SERIES_LABELS[p]}</th>${REGIONS.map((r) => `<td data-readout="${r}.${p}">${esc(last[r][p] ?? '–')}</td>`).join('')}</tr>`,
  ).join('');
  return (
    `<div id="readout" class="readout" aria-live="polite"><p>Prices from <strong data-readout="date">${esc(last.effective_date)}</strong></p>` +
    `<table><thead><tr><th scope="col">Rand per litre</th><th scope="col">Coastal</th><th scope="col">Inland</th></tr></thead><tbody>${rows}</tbody></table></div>`
  );
}

/** The history section's body: range buttons, the charts, legend and readout. */
export function historyHtml(history: readonly PriceSet[]): string {
  const last = history[history.length - 1];
  if (!last) return '<p>No price history yet.</p>';
  const buttons = RANGES.map(
    (r) => `<button type="button" data-range="${r.id}" aria-pressed="${r.id === 'all'}">${r.label}</button>`,
  ).join('');
  const charts = RANGES.map((r) => {
    const sets = inRange(history, r.years);
    const label = r.years === 0 ? 'whole history' : `last ${r.label.replace(' ', '')}`;
    return `<div class="chart-range" data-range="${r.id}"${r.id === 'all' ? '' : ' hidden'}>${SIZES.map((s) => svg(sets, s, label)).join('')}</div>`;
  }).join('');
  return `<div class="ranges" role="group" aria-label="Chart range">${buttons}</div>${charts}${legend()}${readout(last)}`;
}
