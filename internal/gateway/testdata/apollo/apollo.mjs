// Does what the README tells an Apollo Client user to do, against a running gateway, and prints
// one JSON object with what came back (see apollo_test.go).
// Usage: node apollo.mjs <gateway url> <project dir> <client module> <query file>
//
// <project dir> is a front end's project: the README's codegen.yml, a node_modules with this
// directory's packages, and <client module>, the README's client code, which exports the
// ApolloClient it makes.
// 1. Runs graphql-codegen in the project, as `npx graphql-codegen` does, and reads the
//    possibleTypes it wrote.
// 2. Runs the query with the README's client (InMemoryCache given those possibleTypes), with
//    the same client but no possibleTypes, and plainly over HTTP, for comparison.
// 3. Prints the schema the gateway serves at /graphql/schema.graphql and the one its
//    introspection gives, each built and printed by graphql-js, to compare.
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import {
  buildClientSchema, buildSchema, getIntrospectionQuery, lexicographicSortSchema, printSchema,
} from 'graphql';

const [base, project, clientModule, queryFile] = process.argv.slice(2);
const query = gql(await readFile(queryFile, 'utf8'));

// 1. Codegen. The project holds no JSON file before, so the one it holds after is codegen's.
const jsonFiles = async () => (await readdir(project, { recursive: true }))
  .filter((name) => !name.startsWith('node_modules') && name.endsWith('.json'));
if ((await jsonFiles()).length > 0) {
  console.error(`${project} holds JSON files before graphql-codegen runs: ${await jsonFiles()}`);
  process.exit(1);
}
try {
  await promisify(execFile)(path.join(project, 'node_modules', '.bin', 'graphql-codegen'), [], { cwd: project });
} catch (e) {
  console.error(`graphql-codegen failed: ${e.message}\n${e.stdout}\n${e.stderr}`);
  process.exit(1);
}
const written = await jsonFiles();
if (written.length !== 1) {
  console.error(`graphql-codegen wrote ${JSON.stringify(written)}, want one JSON file`);
  process.exit(1);
}
const generated = JSON.parse(await readFile(path.join(project, written[0]), 'utf8'));

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
const { default: readmeClient } = await import(pathToFileURL(clientModule).href);
const withPossibleTypes = await run(readmeClient);
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
  codegenFile: written[0],
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
