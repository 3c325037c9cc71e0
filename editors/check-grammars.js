// Manual check of the TextMate grammars with VS Code's own engine
// (vscode-textmate on Oniguruma), not run by CI. From editors/:
//
//   npm install --no-save vscode-textmate@9 vscode-oniguruma@2
//   node check-grammars.js ../examples/*.ad ../tests/ir/*/*.adir
//
// Every non-blank character of every file must get a scope besides the
// grammar's root scope, and no scope may be `invalid`; with `--dump` the
// tokens of each file are printed.
"use strict";
const fs = require("fs");
const path = require("path");
const tm = require("vscode-textmate");
const onig = require("vscode-oniguruma");

const here = __dirname;
const wasm = fs.readFileSync(path.join(path.dirname(require.resolve("vscode-oniguruma")), "onig.wasm"));
const onigLib = onig.loadWASM(wasm.buffer).then(() => ({
  createOnigScanner: (sources) => new onig.OnigScanner(sources),
  createOnigString: (s) => new onig.OnigString(s),
}));
const files = { "source.ad": "ad.tmLanguage.json", "source.adir": "adir.tmLanguage.json" };
const registry = new tm.Registry({
  onigLib,
  loadGrammar: async (scope) => {
    const file = path.join(here, "vscode", "syntaxes", files[scope]);
    return tm.parseRawGrammar(fs.readFileSync(file, "utf8"), file);
  },
});

async function main() {
  const args = process.argv.slice(2);
  const dump = args.includes("--dump");
  let bad = 0;
  for (const file of args.filter((a) => a !== "--dump")) {
    const scope = file.endsWith(".adir") ? "source.adir" : "source.ad";
    const grammar = await registry.loadGrammar(scope);
    let state = tm.INITIAL;
    const lines = fs.readFileSync(file, "utf8").split("\n");
    lines.forEach((line, n) => {
      const r = grammar.tokenizeLine(line, state);
      for (const t of r.tokens) {
        const text = line.slice(t.startIndex, t.endIndex);
        const scopes = t.scopes.slice(1);
        if (dump) console.log(`${file}:${n + 1}: ${JSON.stringify(text)} ${scopes.join(" ")}`);
        if (text.trim() && (scopes.length === 0 || scopes.some((s) => s.includes("invalid")))) {
          console.log(`${file}:${n + 1}: ${JSON.stringify(text)} has scopes [${scopes.join(", ")}]`);
          bad++;
        }
      }
      state = r.ruleStack;
    });
  }
  console.log(bad === 0 ? "all tokens scoped" : `${bad} unscoped tokens`);
  process.exit(bad === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(2);
});
