// Opens the gateway's GraphQL IDE in headless Chromium with a query in the address, runs it
// with the IDE's own button, waits for the response pane to show a text, and prints one JSON
// line: the whole response and any request the page could not make.
// Usage: node ide.mjs <gateway url> <query> <text to wait for>
// For a subscription, DELIVER_BODY (a webhook event) is POSTed to <gateway url>/webhooks with
// DELIVER_KEY every 300 ms until the text shows, since the page subscribes when it is ready.
import { chromium } from 'playwright-core';

const [base, query, expect] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  // The machine's network is closed: no background traffic, no QUIC, no first-run work.
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage();
  const failed = [];
  page.on('requestfailed', (r) => failed.push(r.url()));
  page.on('pageerror', (e) => failed.push('page error: ' + e.message));
  await page.goto(base + '/?query=' + encodeURIComponent(query));
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
  // The pane is an editor that draws only the lines in view: read its whole value.
  const text = await page.evaluate(() => document.querySelector('.graphiql-response .CodeMirror').CodeMirror.getValue());
  console.log(JSON.stringify({ text, failed }));
} finally {
  await browser.close();
}
