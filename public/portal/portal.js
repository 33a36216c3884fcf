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
