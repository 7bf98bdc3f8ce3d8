// Drives the pop-out assistant and the chat SDK in headless Chromium and prints one JSON
// object of what it saw. Usage: node popout.mjs <mode> <page server url>
//   popout  opens /assistant/demo, clicks its button, follows the pop-out through ready,
//           identify, a message, the "wider" button and (EXPECT_EXPIRY=1) a session that expires
//   watch   opens /assistant and watches it for WATCH_MS (say, a page that must stay empty)
//   reopen  types into the pop-out, reloads the opener and opens the assistant again
//   pending sends a message while no new token can be had after the session expired
//   greet   opens /assistant, reads its title, greeting and empty states, sends a message and
//           counts where its reply shows, then sends one while the window is hidden
//   sdk     runs the SDK's configuration cases on /harness
import { chromium } from 'playwright-core';

const [mode, base] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    // A screen tall enough for the 730-pixel pop-out, which a browser fits to the screen.
    '--screen-info={0,0 1600x1200}'],
});
const out = { urls: [], tokens: [], bearers: [], pageErrors: [], graphqlBodies: [], graphqlAuth: [] };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
try {
  // No emulated viewport: a pop-out is as large as window.open's features make it.
  const context = await browser.newContext({ viewport: null });
  context.on('request', (r) => {
    out.urls.push(r.url());
    const auth = r.headers().authorization;
    if (auth && r.url().includes('/v1/chat/')) out.bearers.push(auth.replace(/^Bearer /, ''));
    if (r.url().endsWith('/graphql')) {
      out.graphqlBodies.push(r.postData());
      out.graphqlAuth.push(r.headers().authorization ?? '');
    }
  });
  context.on('response', async (r) => {
    if (!r.url().endsWith('/graphql')) return;
    try {
      const body = await r.json();
      out.tokens.push(body.data.createAssistantSession.token);
    } catch (e) { /* not a token */ }
  });
  context.on('page', (p) => p.on('pageerror', (e) => out.pageErrors.push(e.message)));
  await context.addInitScript(() => {
    const open = window.open;
    window.open = function (...args) {
      (window.__opened ||= []).push(args.map(String));
      return open.apply(this, args);
    };
    const resizeBy = window.resizeBy;
    window.resizeBy = function (x, y) {
      (window.__resized ||= []).push([x, y]);
      return resizeBy.call(this, x, y);
    };
  });
  const events = (p) => p.evaluate(() => (document.documentElement.dataset.assistantEvents || '').split(' ').filter(Boolean));
  const count = (list, name) => list.filter((e) => e === name).length;
  // readyAndIdentified waits until the pop-out page p has heard ready and identified.
  const readyAndIdentified = (p) => p.waitForFunction(() => {
    const ev = (document.documentElement.dataset.assistantEvents || '').split(' ');
    return ev.includes('ready') && ev.includes('identify');
  }, null, { timeout: 15000 });

  if (mode === 'popout') {
    const page = await context.newPage();
    page.on('pageerror', (e) => out.pageErrors.push(e.message));
    await page.goto(base + '/assistant/demo');
    out.opener = await page.evaluate(() => ({ screenX, screenY, outerWidth, outerHeight }));
    // First as a page of the gateway's origin with its caller's credentials would open it;
    // then the demo's button, which must refocus the same window.
    const [popup] = await Promise.all([context.waitForEvent('page'),
      page.evaluate((authorization) => { openAssistant({ authorization }); },
        process.env.OPENER_AUTHORIZATION ?? 'Bearer caller-1')]);
    await popup.waitForLoadState();
    await readyAndIdentified(popup);
    out.opened = await page.evaluate(() => window.__opened);
    out.popup = await popup.evaluate(() => ({ name: window.name, innerWidth, innerHeight, url: location.href }));
    const chat = popup.frameLocator('#assistant-chat iframe');
    out.frameBox = await popup.locator('#assistant-chat iframe').boundingBox();
    await chat.locator('#text').fill('first message');
    await chat.locator('#send').click();
    await chat.getByText('You said: first message').waitFor({ timeout: 10000 });
    await chat.locator('#wider').click();
    await popup.waitForFunction(() => (window.__resized || []).length === 1, null, { timeout: 5000 });
    out.widerWidth = await popup.evaluate(() => window.innerWidth);
    await chat.locator('#wider').click();
    await popup.waitForFunction(() => (window.__resized || []).length === 2, null, { timeout: 5000 });
    out.resized = await popup.evaluate(() => window.__resized);
    // Opening again refocuses the same window: the click's handler has run when click
    // returns, and it opened nothing.
    await page.click('#open-assistant');
    out.opened = await page.evaluate(() => window.__opened);
    out.pages = context.pages().length;
    if (process.env.EXPECT_EXPIRY) {
      await popup.waitForFunction(() => {
        const ev = (document.documentElement.dataset.assistantEvents || '').split(' ');
        return ev.includes('session_expired') && ev.filter((e) => e === 'identify').length >= 2;
      }, null, { timeout: 20000, polling: 100 });
      out.identifyAfterExpiry = true;
      await chat.locator('#text').fill('second message');
      await chat.locator('#send').click();
      await chat.getByText('You said: second message').waitFor({ timeout: 10000 });
    }
    out.messages = await chat.locator('#messages li').allTextContents();
    out.events = await events(popup);
    out.notices = await popup.locator('#assistant-notices').textContent();
  } else if (mode === 'reopen') {
    // Text typed into the pop-out, the opener reloaded, the assistant opened again: the same
    // window comes to the front as it was, the text still in its box.
    const page = await context.newPage();
    page.on('pageerror', (e) => out.pageErrors.push(e.message));
    await page.goto(base + '/assistant/demo');
    const [popup] = await Promise.all([context.waitForEvent('page'), page.click('#open-assistant')]);
    await readyAndIdentified(popup);
    const chat = popup.frameLocator('#assistant-chat iframe');
    await chat.locator('#text').fill('typed before the reload');
    await page.reload();
    const popoutLoads = () => out.urls.filter((u) => u === base + '/assistant').length;
    const loadsBefore = popoutLoads();
    await page.click('#open-assistant');
    out.opened = await page.evaluate(() => window.__opened);
    out.waiting = await chat.locator('#text').inputValue();
    // Sending it is a round trip to the chat's host; a navigation the second opening started
    // would have asked for the pop-out page before the answer comes, and emptied the box.
    await chat.locator('#send').click();
    await chat.getByText('You said: typed before the reload').waitFor({ timeout: 10000 }).catch(() => {});
    out.messages = await chat.locator('#messages li').allTextContents();
    out.refused = popoutLoads() - loadsBefore; // pop-out pages loaded by the second opening
    out.pages = context.pages().length;
    out.popup = await popup.evaluate(() => ({ name: window.name, innerWidth, innerHeight, url: location.href }));
  } else if (mode === 'pending') {
    // The session expires while the gateway cannot be reached: a message sent then waits,
    // and goes once the page's retries get a new token to identify with.
    const page = await context.newPage();
    page.on('pageerror', (e) => out.pageErrors.push(e.message));
    await page.goto(base + '/assistant');
    await readyAndIdentified(page);
    // Every step waits on what the page shows or asks for, never on time: on a loaded machine
    // the 5-second session may run out while the first message is still on its way.
    // The gateway passes token requests, then refuses them, then holds one unanswered.
    let gateway = 'pass';
    let refused = 0;
    let held = null;
    let heldOne, refusedOne;
    const holding = new Promise((resolve) => { heldOne = resolve; });
    const refusing = new Promise((resolve) => { refusedOne = resolve; });
    await context.route('**/graphql', (route) => {
      if (gateway === 'pass') return route.continue();
      if (gateway === 'refuse') { refused++; refusedOne(); return route.abort(); }
      held = route;
      heldOne();
    });
    const chat = page.frameLocator('#assistant-chat iframe');
    await chat.locator('#text').fill('before expiry');
    await chat.locator('#send').click();
    await chat.getByText('You said: before expiry').waitFor({ timeout: 20000 });
    // The expiry to wait for is the next one, of the token in use now.
    const expiries = await page.evaluate(() => (document.documentElement.dataset.assistantEvents || '').split(' ').filter((e) => e === 'session_expired').length);
    gateway = 'refuse';
    await page.waitForFunction((n) => (document.documentElement.dataset.assistantEvents || '').split(' ').filter((e) => e === 'session_expired').length > n,
      expiries, { timeout: 20000, polling: 100 });
    // The page asks at once after session_expired, and is refused.
    await refusing;
    gateway = 'hold';
    await chat.locator('#text').fill('after expiry');
    await chat.locator('#send').click();
    // The page is asking again and has no token: the message can only be waiting.
    await holding;
    out.waiting = await chat.locator('#text').inputValue();
    out.refused = refused;
    gateway = 'pass';
    await held.continue();
    await chat.getByText('You said: after expiry').waitFor({ timeout: 15000 });
    out.messages = await chat.locator('#messages li').allTextContents();
    out.events = await events(page);
  } else if (mode === 'greet') {
    const page = await context.newPage();
    page.on('pageerror', (e) => out.pageErrors.push(e.message));
    await page.goto(base + '/assistant');
    // What a reader sees before the chat is ready: the first paint, before any script ran.
    const text = (l) => l.textContent({ timeout: 2000 }).catch(() => '');
    out.before = { heading: await text(page.locator('h1')), greeting: await text(page.locator('#assistant-greeting')),
      waiting: await text(page.locator('#assistant-waiting')) };
    await readyAndIdentified(page);
    const chat = page.frameLocator('#assistant-chat iframe');
    await chat.locator('#compose').waitFor({ timeout: 10000 });
    out.after = { waitingVisible: await page.locator('#assistant-waiting').isVisible(),
      empty: (await chat.locator('#empty').isVisible()) ? await text(chat.locator('#empty')) : '' };
    // Everything the window shows as text: the page's and the chat's.
    const frame = await (await page.locator('#assistant-chat iframe').elementHandle()).contentFrame();
    const shown = async (text) => {
      const all = (await page.evaluate(() => document.body.innerText)) + '\n' + (await frame.evaluate(() => document.body.innerText));
      return all.split(text).length - 1;
    };
    await chat.locator('#text').fill('hello');
    await chat.locator('#send').click();
    await chat.getByText('You said: hello').waitFor({ timeout: 10000 });
    // A notice would come at once after the reply (a message, then a timer in the SDK): the
    // page has heard everything the chat said by the time a second round trip returns.
    await frame.evaluate(() => fetch('/healthz').then(() => new Promise((r) => setTimeout(r, 200))));
    out.replyShown = await shown('You said: hello');
    out.emptyAfter = await chat.locator('#empty').isVisible();
    out.noticesAfterReply = await page.locator('#assistant-notices').textContent();
    // A reply that comes while the window is hidden is also a notice.
    await frame.evaluate(() => Object.defineProperty(document, 'hidden', { configurable: true, get: () => true }));
    await chat.locator('#text').fill('while away');
    await chat.locator('#send').click();
    await page.locator('#assistant-notices').getByText('You said: while away').waitFor({ timeout: 10000 }).catch(() => {});
    out.notices = await page.locator('#assistant-notices').textContent();
    out.messages = await chat.locator('#messages li').allTextContents();
    out.events = await events(page);
  } else if (mode === 'watch') {
    const page = await context.newPage();
    page.on('pageerror', (e) => out.pageErrors.push(e.message));
    await page.goto(base + '/assistant');
    await sleep(Number(process.env.WATCH_MS ?? 4000));
    out.events = await events(page);
    out.notices = await page.locator('#assistant-notices').textContent();
    out.iframes = await page.locator('#assistant-chat iframe').count();
  } else if (mode === 'sdk') {
    const page = await context.newPage();
    page.on('pageerror', (e) => out.pageErrors.push(e.message));
    await page.goto(base + '/harness');
    await page.waitForFunction(() => window.Assistant && window.Assistant.loaded, null, { timeout: 10000 });
    out.cases = await page.evaluate(async () => {
      const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
      const heard = [];
      for (const name of ['ready', 'error', 'destroy']) {
        Assistant('on', name, (e) => heard.push(name === 'error' ? 'error: ' + e.message : name));
      }
      const step = async (fn, wait = 200) => { heard.length = 0; let thrown = null; try { fn(); } catch (e) { thrown = e.message; } await sleep(wait); return { heard: [...heard], thrown }; };
      const frames = () => [...document.querySelectorAll('iframe')].map((f) => f.title);
      const r = {};
      await sleep(100);
      r.queued = [...window.__queuedHeard]; // what the calls queued before the SDK loaded gave
      r.identifyBeforeInit = await step(() => Assistant('identify', { token: 'ast_x' }));
      r.noConfig = await step(() => Assistant('init'));
      r.noContainer = await step(() => Assistant('init', { title: 'x' }));
      r.selector = await step(() => Assistant('init', { container: '#box' }));
      r.missing = await step(() => Assistant('init', { container: 'nowhere' }));
      r.badURL = await step(() => Assistant('init', { container: 'box', iframeUrl: 'javascript:alert(1)' }));
      r.framesAfterBad = frames();
      r.first = await step(() => Assistant('init', { container: 'box', title: 'First' }), 3000);
      r.launcher = await step(() => {
        for (const name of ['open', 'close', 'statechange', 'unread']) Assistant('on', name, () => heard.push(name));
      }, 500);
      r.unknown = await step(() => Assistant('on', 'opened', () => heard.push('opened')));
      r.second = await step(() => Assistant('init', { container: 'box', title: 'Second' }));
      const late = [];
      Assistant('on', 'ready', () => late.push('ready'));
      await sleep(100);
      r.lateReady = late;
      r.framesAfterInits = frames();
      r.destroy = await step(() => Assistant('destroy'));
      r.framesAfterDestroy = frames();
      return r;
    });
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
