import { esc } from './pages.js';

/** The first key of a new account, on the first page after sign-in: its secret, this once. */
export const firstKeyNotice = (secret: string): string =>
  `<section aria-labelledby="first-key"><h2 id="first-key">Your first key</h2><p>Your account is ready, with its first key. Copy it now: it is shown once, and never again.</p><p><code id="first-key-secret">${esc(secret)}</code> <button type="button" class="copy" hidden>Copy</button> <span role="status"></span></p></section>`;
