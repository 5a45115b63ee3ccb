// Dumps a SCIP index as JSON, and for TypeScript/JavaScript trees also each file's
// named function-like definitions ("units"), read with the TypeScript compiler's own
// parser (the one scip-typescript ships), so the oracle never depends on loci's parser.
//
// Usage: node scip_ts_units.js <scip-typescript dir> <index.scip> <tree> <ts|none>
// Output: [{"path", "occ": [[line0, col0, endLine0, endCol0, symbol, roles], ..],
//           "units": [unit, ..]}]  (units only with "ts")
// A unit: {"kind": function|method|getter|constructor|class, "name", "chain": [names of
//   the enclosing units, outermost first], "start": first line of the header (decorators
//   and modifiers included; 1-based), "name_line", "name_col" (0-based), "end_line",
//   "start_off"/"end_off" (0-based line/col pairs of the whole node), "body": bool}
const fs = require("fs");
const path = require("path");
const [scipDir, indexPath, tree, mode] = process.argv.slice(2);
const { scip } = require(path.join(scipDir, "dist/src/scip.js"));
const index = scip.Index.deserializeBinary(fs.readFileSync(indexPath));
let ts = null;
if (mode === "ts") ts = require(path.join(scipDir, "node_modules/typescript"));

function unwrap(e) {
  while (e && (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) ||
    ts.isSatisfiesExpression?.(e) || ts.isTypeAssertionExpression(e))) e = e.expression;
  return e;
}
function isFn(e) {
  e = unwrap(e);
  return e && (ts.isArrowFunction(e) || ts.isFunctionExpression(e));
}
function units(file) {
  const text = fs.readFileSync(path.join(tree, file), "utf8");
  const kind = /\.(js|cjs|mjs)$/.test(file) ? ts.ScriptKind.JS : /\.jsx$/.test(file) ? ts.ScriptKind.JSX
    : /\.tsx$/.test(file) ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const out = [];
  const lc = (pos) => sf.getLineAndCharacterOfPosition(pos);
  function add(kindName, nameNode, headerNode, node, chain, body) {
    const name = nameNode.getText(sf);
    const s = lc(headerNode.getStart(sf)), n = lc(nameNode.getStart(sf));
    const e = lc(node.end);
    const st = lc(node.getStart(sf));
    const u = {
      kind: kindName, name, chain: chain.slice(), start: s.line + 1, name_line: n.line + 1,
      name_col: n.character, end_line: e.line + 1,
      start_off: [st.line, st.character], end_off: [e.line, e.character], body,
    };
    out.push(u);
    return name;
  }
  function visit(node, chain) {
    let pushed = null;
    if (ts.isFunctionDeclaration(node) && node.name) {
      pushed = add("function", node.name, node, node, chain, !!node.body);
    } else if (ts.isMethodDeclaration(node) && node.name) {
      pushed = add("method", node.name, node, node, chain, !!node.body);
    } else if ((ts.isGetAccessor(node) || ts.isSetAccessor(node)) && node.name) {
      pushed = add("getter", node.name, node, node, chain, !!node.body);
    } else if (ts.isConstructorDeclaration(node) && node.body) {
      const kw = node.getChildren(sf).find((c) => c.kind === ts.SyntaxKind.ConstructorKeyword) || node;
      pushed = add("constructor", kw, node, node, chain, true);
    } else if ((ts.isClassDeclaration(node) || ts.isClassExpression(node)) && node.name) {
      pushed = add("class", node.name, node, node, chain, true);
    } else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && isFn(node.initializer)) {
      // `export const f = () => ..`: the header is the whole statement.
      let header = node;
      if (node.parent && ts.isVariableDeclarationList(node.parent) && node.parent.declarations.length === 1 &&
        node.parent.parent && ts.isVariableStatement(node.parent.parent)) header = node.parent.parent;
      pushed = add("function", node.name, header, node, chain, true);
    } else if (ts.isPropertyDeclaration(node) && node.name && isFn(node.initializer)) {
      pushed = add("method", node.name, node, node, chain, true);
    } else if (ts.isPropertyAssignment(node) && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) &&
      isFn(node.initializer)) {
      pushed = add("function", node.name, node, node, chain, true);
    } else if (ts.isFunctionExpression(node) && node.name &&
      !(node.parent && (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent)))) {
      pushed = add("function", node.name, node, node, chain, true);
    } else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      isFn(node.right) && ts.isPropertyAccessExpression(node.left)) {
      // `exports.f = function () ..`, `Foo.prototype.bar = function () ..`
      let header = node.parent && ts.isExpressionStatement(node.parent) ? node.parent : node;
      pushed = add("function", node.left.name, header, node, chain, true);
    }
    const next = pushed === null ? chain : chain.concat([pushed]);
    ts.forEachChild(node, (c) => visit(c, next));
  }
  visit(sf, []);
  return out;
}
const docs = index.documents.map((d) => {
  const occ = d.occurrences.map((o) => {
    const r = o.range;
    // [line, startChar, endChar] or [startLine, startChar, endLine, endChar]
    return r.length === 3 ? [r[0], r[1], r[0], r[2], o.symbol, o.symbol_roles]
      : [r[0], r[1], r[2], r[3], o.symbol, o.symbol_roles];
  });
  const doc = { path: d.relative_path, occ };
  if (ts) {
    try { doc.units = units(d.relative_path); } catch (e) { doc.units = []; doc.error = String(e); }
  }
  return doc;
});
process.stdout.write(JSON.stringify(docs));
