// Subscribes to the gateway's events with a real client library and prints one JSON line per
// event: node subscribe.mjs <ws|sse> <graphql url> <wid> <count>. It exits once count events
// have arrived, or with an error line when the subscription fails.
import { createClient as createWSClient } from 'graphql-ws';
import { createClient as createSSEClient } from 'graphql-sse';
import WebSocket from 'ws';

const [mode, url, wid, count] = process.argv.slice(2);
if (!mode || !url || !wid || !count) {
  console.error('usage: node subscribe.mjs <ws|sse> <graphql url> <wid> <count>');
  process.exit(2);
}
const query = `subscription($wid: ID!) {
  events(filter: { wids: [$wid] }) { id eventType ... on ClientProgressChanged { completionPercentage } }
}`;

const client = mode === 'ws'
  ? createWSClient({ url: url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, retryAttempts: 0 })
  : createSSEClient({ url, retryAttempts: 0 });

let seen = 0;
const timer = setTimeout(() => {
  console.log(JSON.stringify({ error: 'timed out' }));
  process.exit(1);
}, 20000);

const dispose = client.subscribe({ query, variables: { wid } }, {
  next(result) {
    if (result.errors) {
      console.log(JSON.stringify({ error: result.errors }));
      process.exit(1);
    }
    console.log(JSON.stringify(result.data.events));
    if (++seen >= Number(count)) {
      clearTimeout(timer);
      dispose();
      client.dispose();
      process.exit(0);
    }
  },
  error(err) {
    console.log(JSON.stringify({ error: String(err?.message ?? err?.reason ?? err) }));
    process.exit(1);
  },
  complete() {},
});
