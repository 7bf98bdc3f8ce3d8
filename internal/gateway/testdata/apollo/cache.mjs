// Runs docs/graphql.md's normalized-cache operations through the docs' Apollo Client, as a
// screen would: it watches FamilyCards and Card (with a card's id and with its top account's),
// renames the family and the card, and prints one JSON object with what each watched query
// showed before and after, every request that reached the gateway, and anything Apollo Client
// warned or logged as an error (see cache_test.go).
// Usage: node cache.mjs <client module> <operations JSON file> <new family name> <new first name>
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

import { gql } from '@apollo/client';

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
    seen.subscription = client.watchQuery({ query: gql(query), variables }).subscribe({
      next(result) {
        if (result.error) reject(new Error(result.error.message));
        if (result.data && result.dataState === 'complete') {
          seen.data = result.data;
          resolve();
        }
      },
      error: reject,
    });
  });
  return { seen, ready };
}

const family = watch(ops.family);
await family.ready;
const target = pickCard(family.seen.data);
const card = watch(ops.card, { id: target.id });
const account = watch(ops.card, { id: target.accountId });
await Promise.all([card.ready, account.ready]);
const before = { family: family.seen.data, card: card.seen.data, account: account.seen.data };

requests.phase = 'mutations';
const renameFamily = await client.mutate({ mutation: gql(ops.renameFamily), variables: { wid: target.wid, name: newName } });
const renameCard = await client.mutate({
  mutation: gql(ops.renameCard), variables: { wid: target.wid, id: target.id, firstName: newFirstName },
});
await settle(() => renamed(family.seen.data, card.seen.data, account.seen.data, newName, newFirstName));

for (const w of [family, card, account]) w.seen.subscription.unsubscribe();
await print({
  target,
  before,
  after: { family: family.seen.data, card: card.seen.data, account: account.seen.data },
  mutations: { renameFamily: renameFamily.data, renameCard: renameCard.data },
  requests: requests.log,
  logged,
});
