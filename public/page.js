// The public page's only script: the usage check, and the curl lines' host.
// The key stays in this page's memory: it goes out in the X-API-Key header only, never in a URL,
// storage or a cookie. Loaded as a module (deferred, strict).

for (const el of document.querySelectorAll('.origin')) el.textContent = location.origin;

const keyInput = document.getElementById('usage-key');
const button = document.getElementById('usage-check');
const result = document.getElementById('usage-result');

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
      ['Period ends', u.period_ends_at, 'period_ends_at'],
    ]);
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
