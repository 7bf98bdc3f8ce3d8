// launchChromium starts Debian's Chromium headless through playwright-core, as every browser
// check of the tests does, with the command-line switches of args besides.
import { chromium } from 'playwright-core';

export function launchChromium(args = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    // The machine's network is closed: no background traffic, no QUIC, no first-run work.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', ...args],
  });
}
