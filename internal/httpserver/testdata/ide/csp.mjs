// Opens the gateway's IDE in headless Chromium, as a user whose browser keeps an Authorization
// header from an earlier visit, through a link that carries headers of its own (a credential
// among them) and a stray token parameter. It runs the query, then types a new Authorization
// header into the headers editor and edits the query, and prints one JSON line: the addresses
// the page showed, the headers its GraphQL requests carried, what the browser stored, and
// every Content-Security-Policy violation and page error.
// Usage: node csp.mjs <gateway url>
import { chromium } from 'playwright-core';

const [base] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push('page error: ' + e.message));
  // Loads that fail are reported by address below; the console says only that one did.
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push('console: ' + m.text()); });
  page.on('requestfailed', (r) => errors.push('failed: ' + r.url()));
  page.on('response', (r) => {
    if (r.status() >= 400 && new URL(r.url()).pathname !== '/favicon.ico') errors.push(`${r.status()}: ${r.url()}`);
  });
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__violations.push(`${e.violatedDirective} blocked ${e.blockedURI || '(inline)'} ${e.sourceFile}:${e.lineNumber}`));
  });
  const sent = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === '/graphql') sent.push({ ...r.headers(), body: r.postData() });
  });

  // An earlier visit left a credential in the browser's storage.
  await page.goto(base + '/ide/favicon.svg');
  await page.evaluate(() => localStorage.setItem('graphiql:headers', JSON.stringify({ Authorization: 'Bearer stored-token' })));

  const linked = JSON.stringify({ Authorization: 'Bearer link-token', Cookie: 'sid=link-cookie', 'X-Api-Key': 'link-key', 'X-Trace': 't1' });
  const resp = await page.goto(base + '/?query=' + encodeURIComponent('{ __typename }') +
    '&headers=' + encodeURIComponent(linked) + '&access_token=stray-token');
  const pageHeaders = resp.headers();
  await page.locator('.graphiql-query-editor .CodeMirror').waitFor({ timeout: 20000 });
  const opened = page.url();
  await page.locator('.graphiql-execute-button').click({ timeout: 20000 });
  await page.locator('.graphiql-response').getByText('__typename').first().waitFor({ timeout: 20000 });

  // Type a credential into the headers editor, then edit the query, which rewrites the address.
  await page.getByRole('button', { name: 'Headers' }).click();
  await page.locator('section.graphiql-editor-tool[aria-label="Headers"] .graphiql-editor:not(.hidden) .CodeMirror').waitFor({ timeout: 5000 });
  await page.evaluate(() => document.querySelector('section.graphiql-editor-tool[aria-label="Headers"] .graphiql-editor:not(.hidden) .CodeMirror')
    .CodeMirror.setValue(JSON.stringify({ Authorization: 'Bearer typed-token' })));
  await page.evaluate(() => document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.setValue('{ __typename __typename }'));
  await page.waitForFunction(() => location.search.includes('__typename__typename') || location.search.includes('__typename+__typename'), null, { timeout: 5000 });
  const edited = page.url();
  const before = sent.length;
  const next = page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === '/graphql', { timeout: 20000 });
  await page.locator('.graphiql-execute-button').click({ timeout: 20000 });
  await next;
  if (sent.length === before) sent.push({ ...(await next).headers(), body: (await next).postData() });
  const stored = await page.evaluate(() => localStorage.getItem('graphiql:headers'));
  const violations = await page.evaluate(() => window.__violations);
  console.log(JSON.stringify({ pageHeaders, opened, edited, sent, stored, violations, errors, history: await page.evaluate(() => history.length) }));
} finally {
  await browser.close();
}
