// The gateway as a subgraph of a federated graph: composes its `_service { sdl }` with a second
// subgraph (built with @apollo/subgraph, which adds a field to TopAccount) using
// @theguild/federation-composition, serves the supergraph with Hive Gateway, and runs the
// operations the Go test (internal/gateway/federation_compose_test.go) checks through it. It
// prints one JSON object: each operation's answer, as Hive Gateway gave it.
//
// node federation.mjs GATEWAY_URL CALLER_A CALLER_B WEBHOOK_KEY WID CARD_IDS_JSON
import http from 'node:http';
import { parse, graphql } from 'graphql';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { composeServices } from '@theguild/federation-composition';
import { createGatewayRuntime } from '@graphql-hive/gateway';

const [gatewayURL, callerA, callerB, webhookKey, wid, cardIDsJSON] = process.argv.slice(2);
const cardIDs = JSON.parse(cardIDsJSON);

const listen = (server) =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`)));

// The second subgraph: a risk model that scores top accounts by their wid and names the cards
// and families it watches, which the gateway's subgraph resolves.
const riskSDL = `
extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
type TopAccount @key(fields: "wid") { wid: ID! riskScore: Int! }
type Individual @key(fields: "id", resolvable: false) { id: ID! }
type Query { watchedFamilies: [TopAccount!]! watchedCards: [Individual!]! }
`;
const riskSchema = buildSubgraphSchema([{
  typeDefs: parse(riskSDL),
  resolvers: {
    Query: {
      watchedFamilies: () => [{ wid }],
      watchedCards: () => cardIDs.map((id) => ({ id })),
    },
    TopAccount: {
      __resolveReference: (ref) => ({ wid: ref.wid }),
      riskScore: (t) => t.wid.length,
    },
  },
}]);
const risk = http.createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  const { query, variables, operationName } = JSON.parse(body);
  const result = await graphql({ schema: riskSchema, source: query, variableValues: variables, operationName });
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(result));
});
const riskURL = await listen(risk);

const post = async (url, auth, query, variables) => {
  const headers = { 'Content-Type': 'application/json' };
  if (auth) headers.Authorization = auth;
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  return { status: res.status, body: await res.json() };
};

const out = {};
const sdl = await post(`${gatewayURL}/graphql`, callerA, '{ _service { sdl } }');
if (!sdl.body.data) {
  console.log(JSON.stringify({ sdlErrors: sdl.body.errors }));
  process.exit(0);
}
const composed = composeServices([
  { name: 'advisor', typeDefs: parse(sdl.body.data._service.sdl), url: `${gatewayURL}/graphql` },
  { name: 'risk', typeDefs: parse(riskSDL), url: riskURL },
]);
out.compositionErrors = (composed.errors || []).map((e) => e.message);
if (out.compositionErrors.length > 0) {
  console.log(JSON.stringify(out));
  process.exit(0);
}

const hive = createGatewayRuntime({
  supergraph: composed.supergraphSdl,
  logging: false,
  // Hive Gateway subscribes to a subgraph over GraphQL over SSE with GET by default; the gateway
  // serves queries only on GET (docs/graphql.md, "Federation"), and streams a POST that accepts
  // text/event-stream.
  transportEntries: { advisor: { options: { method: 'POST' } } },
  // The caller's credentials go to every subgraph: the gateway admits each request itself.
  propagateHeaders: {
    fromClientToSubgraphs: ({ request }) => ({ authorization: request.headers.get('authorization') }),
  },
});
const hiveServer = http.createServer(hive);
const hiveURL = `${await listen(hiveServer)}/graphql`;

// A query that crosses the two subgraphs: the gateway's family, the risk model's score.
out.cross = await post(hiveURL, callerA, `query($w: ID!) { topAccount(wid: $w) { wid name riskScore } }`, { w: wid });
// An entity batch: the risk model names families and cards, the gateway resolves them.
out.batch = await post(hiveURL, callerA, `{ watchedFamilies { wid name riskScore } watchedCards { id contactId displayName } }`);
// The gateway's error codes pass through: a forged id, and a caller of another firm.
out.notFound = await post(hiveURL, callerA, `{ node(id: "forged") { id } }`);
out.otherFirm = await post(hiveURL, callerB, `{ watchedCards { id displayName } }`);
// Without credentials, the gateway refuses the request.
out.anonymous = await post(hiveURL, '', `query($w: ID!) { topAccount(wid: $w) { name } }`, { w: wid });

// A subscription served through Hive Gateway (GraphQL over SSE): the gateway's events, which the
// service delivers as webhooks until the first reaches the subscriber.
const ctl = new AbortController();
const timer = setTimeout(() => ctl.abort(), 20000);
try {
  const res = await fetch(hiveURL, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', Authorization: callerA },
    body: JSON.stringify({ query: 'subscription { events { wid eventType } }' }),
    signal: ctl.signal,
  });
  out.subscription = { status: res.status, contentType: res.headers.get('content-type') };
  const deliver = setInterval(() => {
    fetch(`${gatewayURL}/webhooks`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'service-api-key': webhookKey },
      body: JSON.stringify({ EventType: 'ClientProgressChanged', Wid: wid, Timestamp: '2026-11-22T10:00:00Z', EstateStatus: 'InProgress', CompletionPercentage: 40 }),
    }).catch(() => {});
  }, 300);
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of res.body) {
    text += decoder.decode(chunk, { stream: true });
    const m = text.match(/^data: ?(.*)$/m);
    if (m) {
      out.subscription.first = JSON.parse(m[1]);
      break;
    }
  }
  clearInterval(deliver);
} catch (e) {
  out.subscription = { ...(out.subscription || {}), error: String(e) };
} finally {
  clearTimeout(timer);
  ctl.abort();
}

console.log(JSON.stringify(out));
await hive.dispose?.();
hiveServer.closeAllConnections?.();
hiveServer.close();
risk.close();
process.exit(0);
