/**
 * The usage section's chart: requests per day, as SVG drawn on the server (no script needed).
 * Each day is a group with its count as its name (`aria-label`, and `<title>` on hover) and a
 * label that the style sheet shows on hover and on keyboard focus; portal.js makes the days one
 * tab stop walked with the arrow keys. The table below it holds the same numbers.
 */
import { esc } from './escape.js';

const W = 450;
const H = 130;
const TOP = 24;

export const CHART_CSS = `.usage-chart{display:block;width:100%;max-width:40rem;height:auto}.usage-chart .hit{fill:transparent}
.usage-chart .fill{fill:#1a5fb4}.usage-chart .value{visibility:hidden;pointer-events:none;font-size:14px;fill:#111}.usage-chart .axis{stroke:#767676}
.usage-chart .day:hover .value,.usage-chart .day:focus .value{visibility:visible}
.usage-chart .day:hover .fill,.usage-chart .day:focus .fill{fill:#0b3a75}.usage-chart .day:focus{outline:none}
.usage-chart .day:focus .hit{fill:#dbe6f5;stroke:#1a5fb4;stroke-width:2}`;

export function usageChart(days: ReadonlyArray<{ day: string; requests: number }>): string {
  const step = W / Math.max(1, days.length);
  const max = Math.max(1, ...days.map((d) => d.requests));
  const bars = days
    .map((d, i) => {
      const h = Math.round((d.requests / max) * (H - TOP - 2));
      const x = i * step;
      const label = esc(`${d.day}: ${d.requests} request${d.requests === 1 ? '' : 's'}`);
      const anchor = x < W / 2 ? `x="0" text-anchor="start"` : `x="${W}" text-anchor="end"`;
      return `<g class="day" tabindex="0" role="img" aria-label="${label}"><title>${label}</title><rect class="hit" x="${x.toFixed(2)}" y="${TOP}" width="${step.toFixed(2)}" height="${H - TOP}"/><rect class="fill" x="${(x + 0.5).toFixed(2)}" y="${H - h}" width="${(step - 1).toFixed(2)}" height="${h}"/><text class="value" ${anchor} y="16">${label}</text></g>`;
    })
    .join('');
  return `<figure><svg class="usage-chart" viewBox="0 0 ${W} ${H}" role="group" aria-label="Requests per day, last ${days.length} days">${bars}<line class="axis" x1="0" y1="${H - 0.5}" x2="${W}" y2="${H - 0.5}"/></svg><figcaption>Requests per day, oldest on the left: point at a day, or Tab to the chart and use the arrow keys, for its count.</figcaption></figure>`;
}
