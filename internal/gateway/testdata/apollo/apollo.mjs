// Does what docs/graphql.md tells an Apollo Client user to do, against a running gateway, and
// prints one JSON object with what came back (see apollo_test.go).
// Usage: node apollo.mjs <gateway url> <client module> <query file> <possibleTypes file>
//
// <client module> is the docs' client module, as written, in a front end's project where
// graphql-codegen has written <possibleTypes file> from the docs' codegen.yml.
// 1. Reads the possibleTypes codegen wrote.
// 2. Runs the query with the docs' client (InMemoryCache given those possibleTypes), with
//    the same client but no possibleTypes, and plainly over HTTP, for comparison.
// 3. Prints the schema the gateway serves at /graphql/schema.graphql and the one its
//    introspection gives, each built and printed by graphql-js, to compare.
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import {
  buildClientSchema, buildSchema, getIntrospectionQuery, lexicographicSortSchema, printSchema,
} from 'graphql';

const [base, clientModule, queryFile, possibleTypesFile] = process.argv.slice(2);
const query = gql(await readFile(queryFile, 'utf8'));

// 1. What codegen wrote.
const generated = JSON.parse(await readFile(possibleTypesFile, 'utf8'));

// 2. The query through Apollo Client. Its warnings and errors are kept, to show whether it
// says anything when it drops fields.
async function run(client) {
  const logged = [];
  const saved = { warn: console.warn, error: console.error };
  console.warn = (...a) => logged.push(a.map(String).join(' '));
  console.error = console.warn;
  try {
    const { data, error } = await client.query({ query, fetchPolicy: 'network-only' });
    return { data, error: error?.message ?? null, logged };
  } catch (e) {
    return { data: null, error: e.message, logged };
  } finally {
    Object.assign(console, saved);
  }
}
const { client: docsClient } = await import(pathToFileURL(clientModule).href);
const withPossibleTypes = await run(docsClient);
const withoutPossibleTypes = await run(new ApolloClient({
  link: new HttpLink({ uri: base + '/graphql' }),
  cache: new InMemoryCache(),
}));

async function post(body) {
  const resp = await fetch(base + '/graphql', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  return resp.json();
}
const plain = await post({ query: await readFile(queryFile, 'utf8') });

// 3. The served SDL and introspection, as graphql-js reads them.
const sdlResp = await fetch(base + '/graphql/schema.graphql');
const sdl = await sdlResp.text();
const introspection = await post({
  query: getIntrospectionQuery({
    descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, inputValueDeprecation: true, oneOf: true,
  }),
});
const print = (schema) => printSchema(lexicographicSortSchema(schema));

console.log(JSON.stringify({
  possibleTypes: generated.possibleTypes,
  with: withPossibleTypes,
  without: withoutPossibleTypes,
  plain,
  sdl: {
    status: sdlResp.status,
    contentType: sdlResp.headers.get('content-type'),
    fromSDL: print(buildSchema(sdl)),
    fromIntrospection: print(buildClientSchema(introspection.data)),
  },
}));
