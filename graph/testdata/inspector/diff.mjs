// Prints, as one JSON array, every change graphql-inspector finds from the schema in argv[2]
// (the last published one) to the schema in argv[3] (the one served): its kind, path, message
// and criticality (BREAKING, DANGEROUS or NON_BREAKING).
//
// It calls @graphql-inspector/core's diff, which `graphql-inspector diff` (the CLI) runs, with no
// rules: the CLI's default rule, simplifyChanges, hides a change at a path where it also sees an
// addition, and so drops breaking changes (an input field whose type changed as it gained a
// description is reported only as "has description"; graphql-inspector's issue 2955). The CLI's
// --rule verboseChanges gives the same list as this one.
import { readFileSync } from 'node:fs';
import { buildSchema } from 'graphql';
import { diff } from '@graphql-inspector/core';

const [oldFile, newFile] = process.argv.slice(2);
if (!oldFile || !newFile) {
  console.error('usage: node diff.mjs PUBLISHED.graphql SERVED.graphql');
  process.exit(2);
}
const load = (file) => buildSchema(readFileSync(file, 'utf8'));
const changes = await diff(load(oldFile), load(newFile));
console.log(JSON.stringify(changes.map((c) => ({
  type: c.type,
  path: c.path ?? '',
  message: c.message,
  level: c.criticality.level,
  reason: c.criticality.reason ?? '',
}))));
