// The portal's one script (served from /portal/, no inline script: the pages' CSP allows only
// this origin's). The pages work without it; it adds what needs script: passkeys.

const bytes = (s) =>
  Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4)), (c) =>
    c.charCodeAt(0),
  );
const text = (buf) =>
  btoa(String.fromCharCode(...new Uint8Array(buf)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

async function post(path, body, csrf) {
  const headers = { 'content-type': 'application/json' };
  if (csrf) headers['x-csrf-token'] = csrf;
  const r = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body), credentials: 'same-origin' });
  const answer = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(answer.message || `The portal answered ${r.status}.`);
  return answer;
}

function say(message) {
  const status = document.getElementById('passkey-status');
  if (status) status.textContent = message;
}

async function addPasskey(form) {
  const csrf = form.elements.csrf_token.value;
  const o = await post('/portal/api/passkeys/options', {}, csrf);
  const publicKey = {
    ...o,
    challenge: bytes(o.challenge),
    user: { ...o.user, id: bytes(o.user.id) },
    excludeCredentials: (o.excludeCredentials || []).map((c) => ({ ...c, id: bytes(c.id) })),
  };
  const cred = await navigator.credentials.create({ publicKey });
  const r = cred.response;
  const response = {
    id: cred.id,
    rawId: text(cred.rawId),
    type: cred.type,
    response: {
      clientDataJSON: text(r.clientDataJSON),
      attestationObject: text(r.attestationObject),
      transports: r.getTransports ? r.getTransports() : undefined,
    },
    clientExtensionResults: {},
    authenticatorAttachment: cred.authenticatorAttachment || undefined,
  };
  await post('/portal/api/passkeys', { name: form.elements.name.value, response }, csrf);
  location.reload();
}

async function signInWithPasskey() {
  const o = await post('/portal/api/passkey-sign-in/options', {});
  const publicKey = {
    ...o,
    challenge: bytes(o.challenge),
    allowCredentials: (o.allowCredentials || []).map((c) => ({ ...c, id: bytes(c.id) })),
  };
  const cred = await navigator.credentials.get({ publicKey });
  const r = cred.response;
  const response = {
    id: cred.id,
    rawId: text(cred.rawId),
    type: cred.type,
    response: {
      clientDataJSON: text(r.clientDataJSON),
      authenticatorData: text(r.authenticatorData),
      signature: text(r.signature),
      userHandle: r.userHandle ? text(r.userHandle) : undefined,
    },
    clientExtensionResults: {},
    authenticatorAttachment: cred.authenticatorAttachment || undefined,
  };
  await post('/portal/api/passkey-sign-in', { response });
  location.assign('/portal/');
}

function offer(id, run) {
  const form = document.getElementById(id);
  if (!form || !window.PublicKeyCredential) return;
  form.hidden = false;
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    say('Waiting for your passkey…');
    run(form).catch((err) => say(`No passkey: ${err.message}`));
  });
}

// A secret shown once: its Copy button (the code beside it), shown where the clipboard is there.
for (const button of document.querySelectorAll('button.copy')) {
  const secret = button.parentElement.querySelector('code');
  const status = button.parentElement.querySelector('[role=status]');
  if (!secret || !navigator.clipboard) continue;
  button.hidden = false;
  button.addEventListener('click', () =>
    navigator.clipboard.writeText(secret.textContent).then(
      () => (status.textContent = 'Copied.'),
      () => (status.textContent = 'Not copied: select the key and copy it.'),
    ),
  );
}

// The usage chart: one tab stop (the latest day), the arrow keys, Home and End walk the days.
const days = [...document.querySelectorAll('.usage-chart .day')];
days.forEach((day, i) => {
  day.setAttribute('tabindex', i === days.length - 1 ? '0' : '-1');
  day.addEventListener('keydown', (e) => {
    const to = { ArrowLeft: i - 1, ArrowRight: i + 1, Home: 0, End: days.length - 1 }[e.key];
    if (to === undefined || !days[to]) return;
    e.preventDefault();
    day.setAttribute('tabindex', '-1');
    days[to].setAttribute('tabindex', '0');
    days[to].focus();
  });
});

offer('passkey-add', addPasskey);
offer('passkey-sign-in', signInWithPasskey);

// "Try it": a form per GET operation of the served OpenAPI document; the key goes in X-API-Key.
function field(form, p, n) {
  const id = `try-${n}-${p.name}`;
  const label = document.createElement('label');
  label.htmlFor = id;
  label.textContent = `${p.name}${p.required ? '' : ' (optional)'}`;
  const input = document.createElement('input');
  input.id = id;
  input.name = p.name;
  input.dataset.in = p.in;
  input.required = Boolean(p.required);
  if (p.example !== undefined) input.placeholder = String(p.example);
  const row = document.createElement('p');
  row.append(label, document.createElement('br'), input);
  form.append(row);
}

async function send(form, path, out) {
  const key = document.getElementById('try-key').value.trim();
  const query = new URLSearchParams();
  let url = path;
  for (const input of form.querySelectorAll('input')) {
    if (input.value === '') continue;
    if (input.dataset.in === 'path') url = url.replace(`{${input.name}}`, encodeURIComponent(input.value));
    else query.set(input.name, input.value);
  }
  const qs = query.toString();
  out.textContent = 'Sending…';
  const r = await fetch(qs ? `${url}?${qs}` : url, { headers: key ? { 'X-API-Key': key } : {}, credentials: 'omit' });
  const body = await r.text();
  out.textContent = `${r.status} ${r.statusText}\n\n${body.length > 4000 ? `${body.slice(0, 4000)}…` : body}`;
}

async function tryIt(holder) {
  const doc = await (await fetch(holder.dataset.document)).json();
  let n = 0;
  for (const [path, item] of Object.entries(doc.paths)) {
    const op = item.get;
    if (!op) continue;
    n += 1;
    const form = document.createElement('form');
    form.className = 'try';
    form.dataset.path = path;
    const title = document.createElement('h2');
    title.textContent = op.summary;
    const line = document.createElement('p');
    const code = document.createElement('code');
    code.textContent = `GET ${path}`;
    line.append(code);
    form.append(title, line);
    const params = (op.parameters || []).filter((p) => !('$ref' in p) && p.name !== 'api_key' && p.in !== 'header');
    for (const p of params) field(form, p, n);
    const button = document.createElement('button');
    button.textContent = `Send ${path}`;
    const out = document.createElement('pre');
    out.setAttribute('role', 'status');
    form.append(button, out);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      send(form, path, out).catch((err) => (out.textContent = `Not sent: ${err.message}`));
    });
    holder.append(form);
  }
}

const holder = document.getElementById('try-forms');
if (holder)
  tryIt(holder).catch((err) => (holder.textContent = `The API's description could not be read: ${err.message}`));
