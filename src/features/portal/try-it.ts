/**
 * "Try it": the public API's operations as forms, built by portal.js from the document the gateway
 * serves (/fuel-api/openapi.json), so they are always the routes it has. The person pastes a key;
 * the page sends it in `X-API-Key` to the API and keeps it nowhere (not in the URL, not stored).
 */
import { page } from './pages.js';

export const tryItPage = (): string =>
  page(
    'Try the API',
    `<h1>Try the API</h1><p><a href="/portal/">Back to your account</a></p>
<p>Paste one of your keys, then send a request. The key is sent from this page in the <code>X-API-Key</code> header, and kept nowhere: not in the address, not by the portal. A metered request counts in your usage.</p>
<p><label for="try-key">Your API key</label><br><input id="try-key" type="password" autocomplete="off" spellcheck="false" size="40"></p>
<div id="try-forms" data-document="/fuel-api/openapi.json"></div>
<noscript><p>Try it needs JavaScript. Without it, call the API with curl, as in the API's documentation.</p></noscript>`,
  );

/** The home page's way there. */
export const tryItLink =
  '<h2>Try the API</h2><p><a href="/portal/try">Send requests to the API with one of your keys</a>.</p>';
