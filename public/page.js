// The public page's only script: the history chart's range buttons and readout (hover and keyboard),
// the usage check (with the last 30 days as a bar chart), and the curl lines' host.
// The key stays in this page's memory: it goes out in the X-API-Key header only, never in a URL,
// storage or a cookie. Loaded as a module (deferred, strict).

for (const el of document.querySelectorAll('.origin')) el.textContent = location.origin;

// The history chart. Each month's hit area carries its eight prices (data-v, in the readout's
// order, "-" for none); hovering it, or focusing a chart and using the arrow keys, shows them.
const readout = document.getElementById('readout');
if (readout) {
  const cells = new Map([...readout.querySelectorAll('[data-readout]')].map((e) => [e.dataset.readout, e]));
  const order = ['coastal', 'inland'].flatMap((r) =>
    ['petrol_93', 'petrol_95', 'diesel_50ppm', 'diesel_500ppm'].map((p) => `${r}.${p}`),
  );
  for (const chart of document.querySelectorAll('svg.chart')) {
    const hits = [...chart.querySelectorAll('.hit')];
    const cursor = chart.querySelector('.cursor');
    let at = hits.length - 1;
    const select = (i) => {
      at = Math.max(0, Math.min(hits.length - 1, i));
      const hit = hits[at];
      cells.get('date').textContent = hit.dataset.date;
      hit.dataset.v.split(' ').forEach((v, k) => {
        cells.get(order[k]).textContent = v === '-' ? '–' : v;
      });
      cursor.setAttribute('x1', hit.dataset.x);
      cursor.setAttribute('x2', hit.dataset.x);
      cursor.setAttribute('visibility', 'visible');
    };
    for (const [i, hit] of hits.entries()) hit.addEventListener('pointerenter', () => select(i));
    chart.addEventListener('focus', () => select(at));
    chart.addEventListener('blur', () => cursor.setAttribute('visibility', 'hidden'));
    chart.addEventListener('keydown', (e) => {
      const to = { ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: hits.length - 1 }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      select(to);
    });
  }
  const buttons = [...document.querySelectorAll('button[data-range]')];
  for (const button of buttons)
    button.addEventListener('click', () => {
      for (const b of buttons) b.setAttribute('aria-pressed', String(b === button));
      for (const range of document.querySelectorAll('.chart-range'))
        range.hidden = range.dataset.range !== button.dataset.range;
    });
}

const keyInput = document.getElementById('usage-key');
const button = document.getElementById('usage-check');
const result = document.getElementById('usage-result');
// The gateway's days are those of its configured zone, not the browser's.
const zone = document.getElementById('usage').dataset.zone;
const SVG = 'http://www.w3.org/2000/svg';
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** '2026-12-09T10:29:00+02:00' → '9 December 2026, 10:29': the wall time as the API gives it. */
function humanDate(iso) {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(iso);
  return m ? `${Number(m[3])} ${MONTHS[Number(m[2]) - 1]} ${m[1]}, ${m[4]}:${m[5]}` : iso;
}

/** Today in the gateway's zone, and the day n days before a day. */
function today() {
  return new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    new Date(),
  );
}
function daysBefore(day, n) {
  return new Date(Date.parse(`${day}T00:00:00Z`) - n * 86_400_000).toISOString().slice(0, 10);
}

function svg(name, attrs) {
  const el = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/** The last 30 days as bars (attributes only: the CSP allows no inline style). */
function chart(days) {
  const W = 600;
  const H = 140;
  const top = 12;
  const bottom = 22;
  const max = Math.max(1, ...days.map((d) => d.requests));
  const bar = W / days.length;
  const root = svg('svg', {
    id: 'usage-chart',
    viewBox: `0 0 ${W} ${H}`,
    role: 'img',
    'aria-label': `Requests per day, ${days[0].date} to ${days.at(-1).date}; most in a day: ${max}`,
  });
  for (const [i, d] of days.entries()) {
    const h = ((H - top - bottom) * d.requests) / max;
    const rect = svg('rect', {
      class: 'bar',
      x: (i * bar + 1).toFixed(1),
      y: (H - bottom - h).toFixed(1),
      width: (bar - 2).toFixed(1),
      height: h.toFixed(1),
      'data-day': d.date,
      'data-requests': d.requests,
    });
    const title = svg('title', {});
    title.textContent = `${d.date}: ${d.requests} request${d.requests === 1 ? '' : 's'}`;
    rect.append(title);
    root.append(rect);
  }
  for (const [i, anchor] of [
    [0, 'start'],
    [days.length - 1, 'end'],
  ]) {
    const label = svg('text', { class: 'tick', x: anchor === 'start' ? 0 : W, y: H - 6, 'text-anchor': anchor });
    label.textContent = days[i].date;
    root.append(label);
  }
  const peak = svg('text', { class: 'tick', x: 0, y: 10 });
  peak.textContent = `max ${max}/day`;
  root.append(peak);
  return root;
}

async function history(key) {
  const to = today();
  const r = await fetch(`/fuel-api/api/usage-history.php?from=${daysBefore(to, 29)}&to=${to}`, {
    headers: { 'X-API-Key': key },
    cache: 'no-store',
    credentials: 'omit',
  });
  const body = await r.json();
  if (!body.success) return;
  const caption = document.createElement('p');
  caption.className = 'note';
  caption.textContent = 'Requests per day, last 30 days';
  result.append(caption, chart(body.days));
}

function show(rows) {
  const dl = document.createElement('dl');
  for (const [label, value, field] of rows) {
    const dt = document.createElement('dt');
    dt.textContent = label;
    const dd = document.createElement('dd');
    dd.textContent = String(value);
    dd.dataset.usage = field;
    dl.append(dt, dd);
  }
  result.replaceChildren(dl);
}

async function check() {
  const key = keyInput.value.trim();
  if (key === '') {
    result.textContent = 'Enter your API key.';
    return;
  }
  button.disabled = true;
  result.textContent = 'Checking…';
  try {
    const r = await fetch('/fuel-api/api/usage.php', {
      headers: { 'X-API-Key': key },
      cache: 'no-store',
      credentials: 'omit',
    });
    const body = await r.json();
    if (!body.success) {
      result.textContent = body.message;
      return;
    }
    const u = body.usage;
    show([
      ['Plan', `${u.plan_type} (${u.request_period})`, 'plan_type'],
      ['Used', u.requests_used, 'requests_used'],
      ['Limit', u.request_limit, 'request_limit'],
      ['Remaining', u.requests_remaining, 'requests_remaining'],
      ['Period', `${humanDate(u.period_started_at)} to ${humanDate(u.period_ends_at)}`, 'period'],
      ['Period ends', humanDate(u.period_ends_at), 'period_ends_at'],
    ]);
    await history(key);
  } catch {
    result.textContent = 'The gateway could not be reached.';
  } finally {
    button.disabled = false;
  }
}

button.addEventListener('click', check);
keyInput.addEventListener('keydown', (e) => {
  if (e.key === 'Enter') check();
});
