// Opens a page of one origin in headless Chromium and has it call the gateway, on another
// origin, as a front end would: a POST of JSON (preflighted) and a GET, each with and without
// credentials. Prints one JSON object: for each call, what the page could read or the error
// the browser gave it.
// Usage: node cors.mjs <page url> <gateway url>
import { launchChromium } from './browser.mjs';

const [pageURL, gateway] = process.argv.slice(2);
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.goto(pageURL);
  const results = await page.evaluate(async (gw) => {
    const query = '{ topAccounts(limit: 1) { nodes { name } } }';
    const calls = {
      post: (credentials) => fetch(gw + '/graphql', {
        method: 'POST', credentials, headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      }),
      get: (credentials) => fetch(gw + '/graphql?query=' + encodeURIComponent(query), { credentials }),
    };
    const out = {};
    for (const [name, call] of Object.entries(calls)) {
      for (const credentials of ['omit', 'include']) {
        try {
          const resp = await call(credentials);
          out[name + ' ' + credentials] = await resp.text();
        } catch (e) {
          out[name + ' ' + credentials] = 'refused: ' + e.message;
        }
      }
    }
    return out;
  }, gateway);
  console.log(JSON.stringify(results));
} finally {
  await browser.close();
}
