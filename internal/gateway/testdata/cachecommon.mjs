// What apollo/cache.mjs and urql/cache.mjs share: they differ only in how their client
// watches a query and sends a mutation. Imports nothing, so either directory's packages do.

// countRequests records every request sent with fetch from now on (the clients look fetch up
// when they send), with the operation it carried and the phase the script was in.
export function countRequests() {
  const counter = { phase: 'queries', log: [] };
  const fetch = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    // urql sends a query as a GET (its preferGetMethod) and a mutation as a POST.
    const url = new URL(String(input?.url ?? input));
    let operationName = url.searchParams.get('operationName');
    if (init?.body) {
      try {
        operationName = JSON.parse(init.body).operationName ?? null;
      } catch {
        operationName = String(init.body);
      }
    }
    counter.log.push({ phase: counter.phase, method: init?.method ?? 'GET', url: url.pathname, operationName });
    return fetch(input, init);
  };
  return counter;
}

// captureConsole keeps what the client warns or logs as an error.
export function captureConsole() {
  const logged = [];
  console.warn = (...a) => logged.push(a.map(String).join(' '));
  console.error = console.warn;
  return logged;
}

// pickCard is the first Individual card of FamilyCards's top account that its relationships
// show, with the ids the other operations need.
export function pickCard(data) {
  const family = data.topAccounts.nodes[0];
  const inRelationships = new Set();
  for (const r of family.relationships) {
    for (const end of [r.source, r.target]) if (end.contact) inRelationships.add(end.contact.id);
  }
  const card = family.contacts.find((c) => c.__typename === 'Individual' && inRelationships.has(c.id));
  if (!card) throw new Error('FamilyCards shows no Individual card that a relationship names');
  return { id: card.id, contactId: card.contactId, wid: family.wid, accountId: family.id };
}

// settle waits for the cache to tell its watchers, which it does after the mutation's answer:
// until shown() holds, or for 5 seconds when it never does (the test then says what the
// queries show). A little longer, so that a late refetch would be counted.
export async function settle(shown) {
  const until = Date.now() + 5000;
  while (!shown() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  await new Promise((resolve) => setTimeout(resolve, 200));
}

// renamed says whether the watched queries show the new names (cache_test.go checks the rest).
export function renamed(family, card, account, newName, newFirstName) {
  return family?.topAccounts?.nodes?.[0]?.name === newName
    && card?.node?.firstName === newFirstName
    && account?.node?.name === newName;
}

// print writes v as JSON and exits once it is written: a client may hold the event loop open.
export function print(v) {
  return new Promise(() => process.stdout.write(JSON.stringify(v) + '\n', () => process.exit(0)));
}
