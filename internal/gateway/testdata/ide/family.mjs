// Opens the gateway's family page in headless Chromium and prints one JSON object with what it
// drew and did (see familypage_test.go): the cards and edges of the graph, the table, the SVG
// and PNG it downloads, keyboard navigation, a filter, a live event (posted as a webhook once
// the page listens), a card created by a mutation and shown after Refresh, and every address
// the page asked for; then the IDE's Family tab, with a query naming the wid. With a second
// wid, it then opens that family and reports its layout time.
// Usage: node family.mjs <gateway url> <wid> <screenshot path> [<large wid>]
// Environment: DELIVER_KEY (the webhook key), MUTATION (a mutation taking $wid).
import { readFile } from 'node:fs/promises';

import { launchChromium } from './browser.mjs';

const [base, wid, screenshot, largeWID] = process.argv.slice(2);
const browser = await launchChromium();
const out = { requested: [], errors: [] };
try {
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  page.on('request', (r) => out.requested.push(r.url()));
  page.on('pageerror', (e) => out.errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') out.errors.push(m.text()); });

  const ready = (n) => page.waitForFunction((n) => window.familyGraph?.state === 'ready' && window.familyGraph.rendered >= n, n, { timeout: 60000 });
  await page.goto(`${base}/family/${wid}`);
  await ready(1);
  const graph = () => page.evaluate(() => {
    const { cy } = window.familyGraph;
    return {
      nodes: cy.nodes().map((n) => ({ id: n.id(), label: n.data('label'), type: n.data('type'), x: n.position('x'), y: n.position('y') })),
      edges: cy.edges().map((e) => ({ source: e.source().id(), target: e.target().id(), role: e.data('role'), label: e.data('label') })),
    };
  });
  Object.assign(out, await graph());
  out.status = await page.locator('#status').textContent();
  out.tableRows = await page.locator('#edges tbody tr').count();
  out.layoutMs = await page.evaluate(() => window.familyGraph.layoutMs);
  await page.screenshot({ path: screenshot });

  const downloaded = async (button) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
    return readFile(await download.path());
  };
  out.svg = (await downloaded('#download-svg')).toString('utf8');
  const png = await downloaded('#download-png');
  out.pngBytes = png.length;
  out.pngSignature = png.subarray(1, 4).toString('latin1');

  await page.focus('#graph');
  await page.keyboard.press('Home');
  const first = await page.locator('#details h2').textContent();
  await page.keyboard.press('ArrowRight');
  out.keyboard = [first, await page.locator('#details h2').textContent()];

  await page.uncheck('#type-filter input[value=INDIVIDUAL]');
  out.visibleAfterFilter = await page.evaluate(() => window.familyGraph.shown(window.familyGraph.cy.nodes()).length);
  await page.check('#type-filter input[value=INDIVIDUAL]');

  // A live event: posted once the page's stream is open; it is listed, and, since it changes
  // ownership, the graph is fetched again.
  await page.waitForFunction(() => window.familyGraph.live === true, null, { timeout: 20000 });
  const rendered = await page.evaluate(() => window.familyGraph.rendered);
  const resp = await fetch(`${base}/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'service-api-key': process.env.DELIVER_KEY },
    body: JSON.stringify({ Wid: wid, EventType: 'AssetOwnershipAdded', Timestamp: new Date().toISOString(), AssetName: 'Boat', OwnerAdded: [{ Name: 'Leo Hartwell' }] }),
  });
  out.webhookStatus = resp.status;
  await page.locator('#events li').first().waitFor({ timeout: 20000 });
  out.event = await page.locator('#events li').first().getAttribute('data-type');
  await ready(rendered + 1);

  // A card created by a mutation appears after Refresh, placed by the layout.
  const before = await page.evaluate(() => window.familyGraph.rendered);
  const created = await (await fetch(`${base}/graphql`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: process.env.MUTATION, variables: { wid } }),
  })).json();
  out.mutationErrors = created.errors ?? null;
  await page.click('#refresh');
  await ready(before + 1);
  out.afterRefresh = await graph();

  // The IDE's Family tab draws the top account the query names.
  await page.goto(`${base}/?query=${encodeURIComponent(`query { topAccount(wid: "${wid}") { name } }`)}`);
  await page.locator('.graphiql-query-editor .CodeMirror').waitFor({ timeout: 20000 });
  await page.locator('button[aria-label="Show Family"]').click({ timeout: 20000 });
  // The iframe's element may be there before its document: the frame starts at about:blank.
  const frame = await (await page.locator('iframe.family-frame').elementHandle({ timeout: 20000 })).contentFrame();
  await frame.waitForURL(/\/family\//, { timeout: 20000 });
  await frame.waitForFunction(() => window.familyGraph?.state === 'ready', null, { timeout: 60000 });
  out.ideTab = { url: frame.url(), nodes: await frame.evaluate(() => window.familyGraph.nodes) };

  // A large family: grouped by type at first; a group's cards on click; every card on
  // "Show every card", with the time that layout took.
  if (largeWID) {
    await page.goto(`${base}/family/${largeWID}`);
    await ready(1);
    const stats = () => page.evaluate(() => {
      const g = window.familyGraph;
      return { nodes: g.nodes, cards: g.cards, grouped: g.grouped, layoutMs: g.layoutMs };
    });
    out.large = { grouped: await stats() };
    await page.evaluate(() => { window.familyGraph.cy.$id('group:CHARITY').emit('tap'); }); // nothing returned: a collection would be serialized whole
    await ready(2);
    out.large.charities = await stats();
    await page.click('#expand-all');
    await ready(3);
    out.large.all = await stats();
  }
} catch (e) {
  out.errors.push(String(e));
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
