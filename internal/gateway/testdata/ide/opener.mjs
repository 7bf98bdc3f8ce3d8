// Opens a page of the integrator's own (another origin than the gateway's) that includes the
// gateway's /assistant/open.js, presses its button as a reader would, and follows the window
// it opens. Prints one JSON object: what the pop-out showed, the events its page heard, the
// conversation after one message, and what went wrong on the way.
// Usage: node opener.mjs <page url> <gateway url>
// OPENER_AUTHORIZATION, when set, opens the assistant with openAssistant({authorization})
// instead of the page's button, as a page handing over its caller's credentials does.
// HOST_RULES, when set, is Chromium's --host-resolver-rules, so that the page can be on a
// name of its own (another site, not only another port).
import { launchChromium } from './browser.mjs';

const [pageURL, gateway] = process.argv.slice(2);
const browser = await launchChromium(process.env.HOST_RULES ? ['--host-resolver-rules=' + process.env.HOST_RULES] : []);
const out = { pageErrors: [], consoleErrors: [], failed: [], events: [], messages: [], graphqlAuth: [] };
const events = (p) => p.evaluate(() => (document.documentElement.dataset.assistantEvents || '').split(' ').filter(Boolean));
try {
  const context = await browser.newContext();
  context.on('page', (p) => {
    p.on('pageerror', (e) => out.pageErrors.push(p.url() + ': ' + e.message));
    // A policy's refusal (a frame, a script) shows only here.
    p.on('console', (m) => { if (m.type() === 'error') out.consoleErrors.push(p.url() + ': ' + m.text()); });
  });
  context.on('request', (r) => {
    if (r.url() === gateway + '/graphql') out.graphqlAuth.push(r.headers().authorization ?? '');
  });
  context.on('requestfailed', (r) => out.failed.push(r.url() + ': ' + (r.failure()?.errorText ?? '')));
  const page = await context.newPage();
  await page.goto(pageURL);
  out.opener = page.url();
  const authorization = process.env.OPENER_AUTHORIZATION;
  const [popup] = await Promise.all([context.waitForEvent('page', { timeout: 10000 }).catch(() => null),
    authorization ? page.evaluate((a) => { openAssistant({ authorization: a }); }, authorization)
      : page.getByRole('button').click()]);
  // When none opened, the page's errors say why.
  if (popup) {
    // The window opens blank, then goes to the pop-out page.
    await popup.waitForURL(gateway + '/assistant', { timeout: 15000 }).catch(() => {});
    await popup.waitForLoadState();
    out.popup = { url: popup.url(), name: await popup.evaluate(() => window.name), title: await popup.title() };
    const text = (sel) => popup.locator(sel).textContent({ timeout: 5000 }).catch(() => '');
    out.heading = await text('h1');
    out.greeting = await text('#assistant-greeting');
    // Ready and identified: the chat shows and holds a session token.
    out.ready = await popup.waitForFunction(() => {
      const ev = (document.documentElement.dataset.assistantEvents || '').split(' ');
      return ev.includes('ready') && ev.includes('identify');
    }, null, { timeout: 15000 }).then(() => true, () => false);
    if (out.ready) {
      const chat = popup.frameLocator('#assistant-chat iframe');
      await chat.locator('#text').fill('hello from my page');
      await chat.locator('#send').click();
      await chat.getByText('You said: hello from my page').waitFor({ timeout: 10000 }).catch(() => {});
      out.messages = await chat.locator('#messages li').allTextContents();
    }
    out.events = await events(popup);
    out.notices = await popup.locator('#assistant-notices').textContent().catch(() => '');
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
