// Prints a SCIP index (the protobuf that scip-typescript and scip-python write) as JSON:
// [{ "path": relative path, "occ": [[line0, col0, endCol, symbol, roles], ...] }, ...].
// Usage: node scripts/scip-dump.js <scip.js from @sourcegraph/scip-typescript> <index.scip>
const fs = require("fs");
const { scip } = require(process.argv[2]);
const index = scip.Index.deserializeBinary(fs.readFileSync(process.argv[3]));
const docs = index.documents.map((d) => ({
  path: d.relative_path,
  occ: d.occurrences.map((o) => {
    const r = o.range;
    // [line, startChar, endChar] or [startLine, startChar, endLine, endChar]
    return [r[0], r[1], r.length === 3 ? r[2] : r[3], o.symbol, o.symbol_roles];
  }),
}));
process.stdout.write(JSON.stringify(docs));
