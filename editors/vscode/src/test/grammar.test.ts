// The TextMate grammar, run by the engine VS Code uses (vscode-textmate on Oniguruma): every
// pattern compiles, and a .cute program gets the scopes it should.

import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import * as oniguruma from "vscode-oniguruma";
import * as textmate from "vscode-textmate";

const root = path.join(__dirname, "..", "..");

async function loadGrammar(): Promise<textmate.IGrammar> {
  const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s: string) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async () => {
      const file = path.join(root, "syntaxes", "cute.tmLanguage.json");
      return textmate.parseRawGrammar(fs.readFileSync(file, "utf8"), file);
    },
  });
  const grammar = await registry.loadGrammar("source.cute");
  assert.ok(grammar, "the grammar loads");
  return grammar;
}

/** Each token's text and its innermost scope, line by line. */
function tokenize(grammar: textmate.IGrammar, text: string): Map<string, string> {
  const scopes = new Map<string, string>();
  let state = textmate.INITIAL;
  for (const line of text.split("\n")) {
    const result = grammar.tokenizeLine(line, state);
    for (const token of result.tokens) {
      const word = line.slice(token.startIndex, token.endIndex).trim();
      if (word && !scopes.has(word)) {
        scopes.set(word, token.scopes[token.scopes.length - 1]);
      }
    }
    state = result.ruleStack;
  }
  return scopes;
}

const PROGRAM = `// a comment
/* an /* inner */ remark */
const WARPS = 4;
kernel rows(g: tensor<f32, gmem, (?,?{div=8}):(?{div=8},1), align: 16>, const tc) {
    let thr = tc.get_slice(thread_idx.x);
    let n = size(g, mode: 0x1F) + 1.5e3;
    print("{} rows\\n", n);
}
host run(g: tensor<f32, gmem, (?,8):(8,1)>) {
    launch rows(g, 1) grid(1) block(128);
}`;

test("a .cute program gets its scopes", async () => {
  const scopes = tokenize(await loadGrammar(), PROGRAM);
  const expected: [string, string][] = [
    ["// a comment", "comment.line.double-slash.cute"],
    ["remark", "comment.block.cute"],
    ["kernel", "storage.type.function.cute"],
    ["rows", "entity.name.function.cute"],
    ["tensor", "support.type.cute"],
    ["f32", "support.type.primitive.cute"],
    ["gmem", "support.constant.memory-space.cute"],
    ["?{div=8}", "constant.other.dynamic.cute"],
    ["align", "keyword.other.align.cute"],
    ["get_slice", "entity.name.function.method.cute"],
    ["thread_idx", "variable.language.cute"],
    ["size", "support.function.builtin.cute"],
    ["mode", "variable.parameter.cute"],
    ["0x1F", "constant.numeric.hex.cute"],
    ["1.5e3", "constant.numeric.float.cute"],
    ["\\n", "constant.character.escape.cute"],
    ["launch", "keyword.control.cute"],
    ["block", "keyword.other.launch-clause.cute"],
  ];
  for (const [word, scope] of expected) {
    assert.equal(scopes.get(word), scope, `scope of \`${word}\``);
  }
});

test("every sample tokenizes to the end", async () => {
  const grammar = await loadGrammar();
  const samples = path.join(root, "..", "..", "samples");
  for (const name of fs.readdirSync(samples).filter((f) => f.endsWith(".cute"))) {
    const text = fs.readFileSync(path.join(samples, name), "utf8");
    let state = textmate.INITIAL;
    for (const line of text.split("\n")) {
      const result = grammar.tokenizeLine(line, state);
      assert.ok(result.tokens[result.tokens.length - 1].endIndex >= line.length, `${name}: ${line}`);
      assert.ok(!result.stoppedEarly, `${name}: ${line}`);
      state = result.ruleStack;
    }
    // A comment or string left open would colour the rest of the file.
    const last = grammar.tokenizeLine("x", state).tokens[0].scopes;
    assert.deepEqual(last, ["source.cute"], `${name} ends outside comments and strings`);
  }
});
