// Runs docs/graphql.md's normalized-cache operations through the docs' urql client (Graphcache
// given the schema codegen wrote, nothing else), as apollo/cache.mjs does through Apollo
// Client, and prints the same JSON object (see cache_test.go).
// Usage: node cache.mjs <client module> <operations JSON file> <new family name> <new first name>
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

import { countRequests, captureConsole, pickCard, print, renamed, settle } from '../cachecommon.mjs';

const [clientModule, opsFile, newName, newFirstName] = process.argv.slice(2);
const ops = JSON.parse(await readFile(opsFile, 'utf8'));
const requests = countRequests();
const logged = captureConsole();
const { client } = await import(pathToFileURL(clientModule).href);

// watch keeps the latest data a watched query showed, and resolves when it first has some.
function watch(query, variables) {
  const seen = { data: null };
  const ready = new Promise((resolve, reject) => {
    seen.subscription = client.query(query, variables).subscribe((result) => {
      if (result.error) reject(new Error(result.error.message));
      if (result.data && !result.stale) {
        seen.data = result.data;
        resolve();
      }
    });
  });
  return { seen, ready };
}

async function mutate(query, variables) {
  const result = await client.mutation(query, variables).toPromise();
  if (result.error) throw new Error(result.error.message);
  return result.data;
}

const family = watch(ops.family);
await family.ready;
const target = pickCard(family.seen.data);
const card = watch(ops.card, { id: target.id });
const account = watch(ops.card, { id: target.accountId });
await Promise.all([card.ready, account.ready]);
const before = { family: family.seen.data, card: card.seen.data, account: account.seen.data };

requests.phase = 'mutations';
const renameFamily = await mutate(ops.renameFamily, { wid: target.wid, name: newName });
const renameCard = await mutate(ops.renameCard, { wid: target.wid, id: target.id, firstName: newFirstName });
await settle(() => renamed(family.seen.data, card.seen.data, account.seen.data, newName, newFirstName));

for (const w of [family, card, account]) w.seen.subscription.unsubscribe();
await print({
  target,
  before,
  after: { family: family.seen.data, card: card.seen.data, account: account.seen.data },
  mutations: { renameFamily, renameCard },
  requests: requests.log,
  logged,
});
