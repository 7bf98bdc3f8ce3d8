// Runs every graphql-http server audit against the URL given as the only argument and prints
// one JSON line per audit: {id, name, status, reason}. The Go test decides what passes.
import { serverAudits } from 'graphql-http';

const url = process.argv[2];
if (!url) {
  console.error('usage: node audit.mjs <graphql url>');
  process.exit(2);
}
for (const audit of serverAudits({ url })) {
  const result = await audit.fn();
  console.log(JSON.stringify({ id: audit.id, name: audit.name, status: result.status, reason: result.reason ?? '' }));
}
