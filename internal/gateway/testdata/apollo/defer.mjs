// Runs a query with @defer through Apollo Client 4, as a front end would (HttpLink, and the
// Defer20220824Handler that reads incremental delivery), and prints one JSON object: what each
// result Apollo Client emitted held, and the parts of the raw response (see defer_test.go).
// Usage: node defer.mjs <gateway url> <query file> <possibleTypes JSON>
import { readFile } from 'node:fs/promises';

import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';

const [base, queryFile, possibleTypes] = process.argv.slice(2);
const text = await readFile(queryFile, 'utf8');

const client = new ApolloClient({
  link: new HttpLink({ uri: base + '/graphql' }),
  cache: new InMemoryCache({ possibleTypes: JSON.parse(possibleTypes) }),
  incrementalHandler: new Defer20220824Handler(),
});

// Every result the query's observable emits, in order, until it is complete.
const emitted = await new Promise((resolve, reject) => {
  const seen = [];
  const sub = client.watchQuery({ query: gql(text), fetchPolicy: 'network-only' }).subscribe({
    next(result) {
      seen.push({ dataState: result.dataState, data: result.data ?? null, error: result.error?.message ?? null });
      if (result.dataState === 'complete' || result.error) {
        sub.unsubscribe();
        resolve(seen);
      }
    },
    error: reject,
  });
  setTimeout(() => reject(new Error('the query did not complete in 30 s')), 30000).unref();
});

// The raw response, as Apollo Client asks for it.
const resp = await fetch(base + '/graphql', {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'multipart/mixed;deferSpec=20220824,application/json' },
  body: JSON.stringify({ query: text }),
});
const raw = await resp.text();

console.log(JSON.stringify({
  emitted,
  contentType: resp.headers.get('content-type'),
  raw,
}));
