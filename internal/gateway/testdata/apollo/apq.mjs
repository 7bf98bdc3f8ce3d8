// Runs operations through the docs' Apollo Client with its PersistedQueryLink (docs/limits.md),
// against a running gateway, and prints one JSON object with what went over the wire and what
// the client answered (see persisted_test.go).
// Usage: node apq.mjs <client module> <case>=<query file>...
//
// A case is the response media type the client asks for: "graphql-response" runs with Apollo
// Client's own Accept (application/graphql-response+json first), "json" with
// Accept: application/json. Each case's query runs twice: the first time the gateway does not
// know its hash, the second it does.
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';

import { gql } from '@apollo/client';

const [clientModule, ...cases] = process.argv.slice(2);
const accepts = { 'graphql-response': undefined, json: 'application/json' };

// Every request the client makes, and its answer, as the gateway sent it. Installed before
// the client module is loaded, so that whatever fetch its link takes is this one.
let exchanges = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init = {}) => {
  const resp = await realFetch(input, init);
  const text = await resp.clone().text();
  let sent = {};
  try {
    sent = JSON.parse(init.body ?? '{}');
  } catch {}
  let errors = [];
  try {
    errors = JSON.parse(text).errors ?? [];
  } catch {}
  exchanges.push({
    method: init.method ?? 'GET',
    accept: new Headers(init.headers).get('accept'),
    sentQuery: typeof sent.query === 'string',
    sentHash: typeof sent.extensions?.persistedQuery?.sha256Hash === 'string',
    status: resp.status,
    contentType: resp.headers.get('content-type'),
    cacheControl: resp.headers.get('cache-control'),
    codes: errors.map((e) => e.extensions?.code ?? null),
  });
  return resp;
};

const { client } = await import(pathToFileURL(clientModule).href);
const out = {};
for (const c of cases) {
  const [name, file] = c.split('=');
  if (!(name in accepts)) {
    console.error(`unknown case ${name}: want one of ${Object.keys(accepts)}`);
    process.exit(2);
  }
  const query = gql(await readFile(file, 'utf8'));
  const context = accepts[name] ? { headers: { accept: accepts[name] } } : undefined;
  out[name] = [];
  for (let i = 0; i < 2; i++) {
    exchanges = [];
    let data = null, error = null;
    try {
      ({ data, error } = await client.query({ query, context, fetchPolicy: 'network-only' }));
    } catch (e) {
      error = e;
    }
    out[name].push({ data: data ?? null, error: error ? String(error.message ?? error) : null, exchanges });
  }
}
console.log(JSON.stringify(out));
