// Opens the gateway's GraphQL IDE in headless Chromium with a query in the address (none when
// <query> is empty: a first visit), runs it with the IDE's own button, waits for the response
// pane to show a text, and prints one JSON line: the whole response, the query the editor
// opened on, the page's title and icon, and any request the page could not make.
// Usage: node ide.mjs <gateway url> <query> <text to wait for>
// For a subscription, DELIVER_BODY (a webhook event) is POSTed to <gateway url>/webhooks with
// DELIVER_KEY every 300 ms until the text shows, since the page subscribes when it is ready.
import { launchChromium } from './browser.mjs';

const [base, query, expect] = process.argv.slice(2);
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  const failed = [];
  page.on('requestfailed', (r) => failed.push(r.url()));
  page.on('pageerror', (e) => failed.push('page error: ' + e.message));
  await page.goto(base + '/' + (query ? '?query=' + encodeURIComponent(query) : ''));
  // The editors draw only the lines in view: read their whole values.
  const editorValue = (selector) => page.evaluate((s) => document.querySelector(s).CodeMirror.getValue(), selector);
  await page.locator('.graphiql-query-editor .CodeMirror').waitFor({ timeout: 20000 });
  const opened = await editorValue('.graphiql-query-editor .CodeMirror');
  const title = await page.title();
  const icon = await page.evaluate(() => document.querySelector('link[rel=icon]')?.href ?? null);
  await page.locator('.graphiql-execute-button').click({ timeout: 20000 });
  const pane = page.locator('.graphiql-response');
  let deliveries;
  if (process.env.DELIVER_BODY) {
    deliveries = setInterval(() => {
      fetch(base + '/webhooks', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'service-api-key': process.env.DELIVER_KEY },
        body: process.env.DELIVER_BODY.replace('$N', String(Date.now() % 100)),
      }).catch(() => {});
    }, 300);
  }
  try {
    await pane.getByText(expect).first().waitFor({ timeout: 20000 });
  } finally {
    clearInterval(deliveries);
  }
  const text = await editorValue('.graphiql-response .CodeMirror');
  console.log(JSON.stringify({ text, query: opened, title, icon, failed }));
} finally {
  await browser.close();
}
