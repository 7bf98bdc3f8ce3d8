// Measures the labels of the family page in headless Chromium (see labelcheck.mjs) and prints
// one JSON object: for each wid, what labelProblems found on /family/<wid>, with a screenshot
// of each in <screenshot dir>; then the same in the IDE's Family tab, opened on the IDE's
// default query (which names no wid), with the tab's frame's size and the family it shows.
// Usage: node labels.mjs <gateway url> <screenshot dir> <wid>...
import { launchChromium } from './browser.mjs';
import { labelProblems } from './labelcheck.mjs';

const [base, shots, ...wids] = process.argv.slice(2);
const browser = await launchChromium();
const out = { families: [], errors: [] };
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => out.errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') out.errors.push(m.text()); });
  for (const wid of wids) {
    await page.goto(`${base}/family/${wid}`);
    await page.waitForFunction(() => window.familyGraph?.state === 'ready', null, { timeout: 90000 });
    out.families.push({ wid, ...(await labelProblems(page)) });
    await page.screenshot({ path: `${shots}/family-labels-${wid}.png` });
  }

  await page.goto(`${base}/`);
  await page.locator('.graphiql-query-editor .CodeMirror').waitFor({ timeout: 20000 });
  await page.locator('button[aria-label="Show Family"]').click({ timeout: 20000 });
  // The iframe's element may be there before its document: the frame starts at about:blank.
  const element = page.locator('iframe.family-frame');
  const frame = await (await element.elementHandle({ timeout: 20000 })).contentFrame();
  await frame.waitForURL(/\/family\//, { timeout: 20000 });
  await frame.waitForFunction(() => window.familyGraph?.state === 'ready', null, { timeout: 60000 });
  // The split is set once GraphiQL has drawn the tab.
  await page.waitForFunction(() => document.querySelector('iframe.family-frame').getBoundingClientRect().width > 500, null, { timeout: 5000 }).catch(() => {});
  out.ide = { url: frame.url(), frame: await element.boundingBox(), ...(await labelProblems(frame)) };
  await page.screenshot({ path: `${shots}/family-labels-ide.png` });
} catch (e) {
  out.errors.push(String(e));
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
