// Package bulkdiff holds a differential test and nothing else: the same bulk files go to the
// gateway's checker (internal/bulkfile) and to the sandbox's ingestion over SFTP, and their
// verdicts are compared line by line. The two share the specification's row rules
// (internal/advisorspec) but read files, ids and references each on their own, so that a
// mistake in either shows as a difference. It sits outside both, as neither may import the
// other.
package bulkdiff
