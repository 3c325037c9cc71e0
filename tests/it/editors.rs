//! The editor support in `editors/vscode`: the manifest and language
//! configurations are valid JSON that name files that exist, and the two
//! TextMate grammars (`source.ad`, `source.adir`) are checked by running
//! them.
//!
//! TextMate grammars are Oniguruma regexes; this test compiles them with the
//! `regex` crate instead, which reads a common subset the same way (the
//! grammars use no lookaround, backreferences or possessive quantifiers, so
//! a pattern that compiles here means the same to Oniguruma). A small
//! tokenizer applies the grammar's rules as TextMate does: at each position
//! the earliest match wins, ties go to the end pattern of the open
//! `begin`/`end` rule and then to the first rule in order. With it the test
//! checks that
//!
//! - every keyword of the lexer (`crates/frontend/src/lexer.rs`), every
//!   built-in function, attribute and activity is highlighted as such, and
//!   not inside a longer name;
//! - every opcode, type and keyword the IR printer writes
//!   (`crates/ir/src/print.rs`, the operator enums) is highlighted;
//! - every character of `examples/*.ad`, the docs' ` ```ad ` blocks and
//!   `tests/ir/**/*.adir`, blanks aside, gets a scope.
//!
//! A check against VS Code's own engine is manual (`editors/README.md`).

use crate::support;

use regex::{Regex, RegexBuilder};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn json(path: &str) -> Value {
    let text = support::read(&support::root().join(path));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: invalid JSON: {e}"))
}

fn compile(pattern: &str, what: &str) -> Regex {
    RegexBuilder::new(pattern)
        .multi_line(true)
        .build()
        .unwrap_or_else(|e| panic!("{what}: `{pattern}` does not compile: {e}"))
}

/// A grammar rule, with its includes resolved.
enum Rule {
    Match {
        re: Regex,
        scope: Option<String>,
        captures: BTreeMap<usize, String>,
    },
    Region {
        begin: Regex,
        end: Regex,
        scope: Option<String>,
        begin_captures: BTreeMap<usize, String>,
        end_captures: BTreeMap<usize, String>,
        patterns: Vec<usize>,
    },
}

struct Grammar {
    rules: Vec<Rule>,
    top: Vec<usize>,
}

fn captures(v: &Value) -> BTreeMap<usize, String> {
    let mut out = BTreeMap::new();
    if let Some(obj) = v.as_object() {
        for (k, c) in obj {
            let n: usize = k.parse().unwrap_or_else(|_| panic!("capture `{k}`"));
            let name = c["name"]
                .as_str()
                .unwrap_or_else(|| panic!("capture {k} without a name"));
            out.insert(n, name.to_string());
        }
    }
    out
}

impl Grammar {
    fn load(path: &str, scope_name: &str) -> Grammar {
        let g = json(path);
        assert_eq!(g["scopeName"], scope_name, "{path}: scopeName");
        let repo = g["repository"].as_object().cloned().unwrap_or_default();
        let mut grammar = Grammar {
            rules: Vec::new(),
            top: Vec::new(),
        };
        let mut seen: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        let top = g["patterns"]
            .as_array()
            .expect("top-level patterns")
            .clone();
        grammar.top = grammar.patterns(&top, &repo, &mut seen, path);
        for name in repo.keys() {
            assert!(
                seen.contains_key(name),
                "{path}: repository entry `{name}` is never included"
            );
        }
        grammar
    }

    /// The rules of a `patterns` list, includes expanded in place.
    fn patterns(
        &mut self,
        list: &[Value],
        repo: &serde_json::Map<String, Value>,
        seen: &mut BTreeMap<String, Vec<usize>>,
        path: &str,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        for p in list {
            if let Some(inc) = p["include"].as_str() {
                let name = inc
                    .strip_prefix('#')
                    .unwrap_or_else(|| panic!("{path}: include `{inc}` is not local"));
                if let Some(ids) = seen.get(name) {
                    out.extend(ids.iter().copied());
                    continue;
                }
                let entry = repo
                    .get(name)
                    .unwrap_or_else(|| panic!("{path}: include `{inc}` is not in the repository"));
                let ids = self.rule(entry, repo, seen, path);
                seen.insert(name.to_string(), ids.clone());
                out.extend(ids);
            } else {
                out.extend(self.rule(p, repo, seen, path));
            }
        }
        out
    }

    fn rule(
        &mut self,
        v: &Value,
        repo: &serde_json::Map<String, Value>,
        seen: &mut BTreeMap<String, Vec<usize>>,
        path: &str,
    ) -> Vec<usize> {
        let scope = v["name"].as_str().map(str::to_string);
        if let Some(m) = v["match"].as_str() {
            self.rules.push(Rule::Match {
                re: compile(m, path),
                scope,
                captures: captures(&v["captures"]),
            });
            return vec![self.rules.len() - 1];
        }
        if let Some(b) = v["begin"].as_str() {
            let e = v["end"]
                .as_str()
                .unwrap_or_else(|| panic!("{path}: `begin` without `end`"));
            let inner = v["patterns"].as_array().cloned().unwrap_or_default();
            let patterns = self.patterns(&inner, repo, seen, path);
            self.rules.push(Rule::Region {
                begin: compile(b, path),
                end: compile(e, path),
                scope,
                begin_captures: captures(&v["beginCaptures"]),
                end_captures: captures(&v["endCaptures"]),
                patterns,
            });
            return vec![self.rules.len() - 1];
        }
        let list = v["patterns"]
            .as_array()
            .unwrap_or_else(|| panic!("{path}: a rule without match, begin or patterns"));
        self.patterns(list, repo, seen, path)
    }

    /// The innermost scope of each byte of `text`, line by line.
    fn scopes(&self, text: &str) -> Vec<Vec<Option<String>>> {
        let mut stack: Vec<usize> = Vec::new();
        let mut out = Vec::new();
        for line in text.lines() {
            let mut scopes: Vec<Option<String>> = vec![None; line.len()];
            let mut pos = 0;
            loop {
                let region = stack.last().map(|&r| match &self.rules[r] {
                    Rule::Region {
                        end,
                        scope,
                        end_captures,
                        patterns,
                        ..
                    } => (end, scope, end_captures, patterns),
                    Rule::Match { .. } => unreachable!("only regions are pushed"),
                });
                if let Some((_, Some(s), _, _)) = region {
                    for c in scopes.iter_mut().skip(pos) {
                        *c = Some(s.clone());
                    }
                }
                // (start, end, priority, what): what is None for the end.
                let mut best: Option<(usize, usize, usize, Option<usize>)> = None;
                let mut consider = |start: usize, end: usize, prio: usize, what: Option<usize>| {
                    if best.is_none_or(|(s, _, p, _)| start < s || (start == s && prio < p)) {
                        best = Some((start, end, prio, what));
                    }
                };
                if let Some((end, ..)) = region {
                    if let Some(m) = end.find_at(line, pos) {
                        consider(m.start(), m.end(), 0, None);
                    }
                }
                let list = region.map_or(&self.top, |(_, _, _, p)| p);
                for (i, &r) in list.iter().enumerate() {
                    let re = match &self.rules[r] {
                        Rule::Match { re, .. } => re,
                        Rule::Region { begin, .. } => begin,
                    };
                    if let Some(m) = re.find_at(line, pos) {
                        consider(m.start(), m.end(), i + 1, Some(r));
                    }
                }
                let Some((start, end, _, what)) = best else {
                    break;
                };
                let paint = |scopes: &mut Vec<Option<String>>,
                             re: &Regex,
                             scope: &Option<String>,
                             caps: &BTreeMap<usize, String>| {
                    if let Some(s) = scope {
                        for c in &mut scopes[start..end] {
                            *c = Some(s.clone());
                        }
                    }
                    if let Some(found) = re.captures_at(line, start) {
                        for (n, name) in caps {
                            if let Some(g) = found.get(*n) {
                                for c in &mut scopes[g.start()..g.end()] {
                                    *c = Some(name.clone());
                                }
                            }
                        }
                    }
                };
                match what {
                    None => {
                        let (re, scope, caps, _) = region.expect("an end needs a region");
                        paint(&mut scopes, re, scope, caps);
                        stack.pop();
                    }
                    Some(r) => match &self.rules[r] {
                        Rule::Match {
                            re,
                            scope,
                            captures,
                        } => paint(&mut scopes, re, scope, captures),
                        Rule::Region {
                            begin,
                            scope,
                            begin_captures,
                            ..
                        } => {
                            paint(&mut scopes, begin, scope, begin_captures);
                            stack.push(r);
                        }
                    },
                }
                // An empty match must not stop the scan.
                pos = if end > pos { end } else { pos + 1 };
                if pos > line.len() {
                    break;
                }
            }
            out.push(scopes);
        }
        out
    }

    /// The scope of every byte of `word` when it stands in `line` at `at`.
    fn scope_of(&self, line: &str, at: usize, word: &str) -> Vec<Option<String>> {
        self.scopes(line)[0][at..at + word.len()].to_vec()
    }
}

fn assert_scoped(g: &Grammar, line: &str, word: &str, prefixes: &[&str], what: &str) {
    let at = line
        .find(word)
        .unwrap_or_else(|| panic!("`{word}` is not in `{line}`"));
    let got = g.scope_of(line, at, word);
    let scope = got[0].clone().unwrap_or_default();
    assert!(
        got.iter().all(|s| *s == got[0]) && prefixes.iter().any(|p| scope.starts_with(p)),
        "{what} `{word}` in `{line}`: scopes {got:?}, want one of {prefixes:?}"
    );
}

/// Every byte of `text` that is not blank has a scope, and none is invalid.
fn assert_all_scoped(g: &Grammar, text: &str, what: &str) {
    for (n, (line, scopes)) in text.lines().zip(g.scopes(text)).enumerate() {
        for (i, c) in line.char_indices() {
            if c.is_whitespace() {
                continue;
            }
            match &scopes[i] {
                None => panic!("{what}:{}: `{c}` has no scope in `{line}`", n + 1),
                Some(s) if s.contains("invalid") => {
                    panic!("{what}:{}: `{c}` is {s} in `{line}`", n + 1)
                }
                Some(_) => {}
            }
        }
    }
}

/// The alphabetic `#[token("...")]`s of the lexer: its keywords.
fn lexer_keywords() -> Vec<String> {
    let src = support::read(&support::root().join("crates/frontend/src/lexer.rs"));
    let kws: Vec<String> = src
        .split("#[token(\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter(|t| t.chars().all(|c| c.is_ascii_alphabetic()))
        .map(str::to_string)
        .collect();
    assert!(kws.len() >= 20, "found only {kws:?}");
    kws
}

/// The names `Lowering::builtin` matches on (`len`, `print`, `min`, ...).
fn frontend_builtins() -> Vec<String> {
    let src = support::read(&support::root().join("crates/frontend/src/lower/call.rs"));
    let start = src.find("fn builtin(").expect("the built-in dispatch");
    let body = &src[start..];
    let end = body.find("name =>").expect("the math functions' arm");
    let mut names: Vec<String> = body[..end]
        .split('"')
        .skip(1)
        .step_by(2)
        .filter(|s| {
            s.starts_with(|c: char| c.is_ascii_lowercase())
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
        .map(str::to_string)
        .collect();
    names.extend(
        adc_ir::MathFunc::ALL
            .iter()
            .filter(|m| m.in_source())
            .map(|m| m.name().to_string()),
    );
    assert!(names.contains(&"len".to_string()) && names.contains(&"max".to_string()));
    names
}

const ATTRIBUTES: &[&str] = &[
    "autodiff_reverse",
    "autodiff_forward",
    "reverse_derivative",
    "forward_derivative",
    "checkpoint",
];

#[test]
fn the_manifest_names_both_grammars() {
    let pkg = json("editors/vscode/package.json");
    let dir = support::root().join("editors/vscode");
    let langs = pkg["contributes"]["languages"]
        .as_array()
        .expect("languages");
    let grammars = pkg["contributes"]["grammars"].as_array().expect("grammars");
    for (id, ext, scope) in [("ad", ".ad", "source.ad"), ("adir", ".adir", "source.adir")] {
        let lang = langs
            .iter()
            .find(|l| l["id"] == id)
            .unwrap_or_else(|| panic!("no language `{id}`"));
        assert!(lang["extensions"]
            .as_array()
            .is_some_and(|e| e.iter().any(|x| x == ext)));
        let config = lang["configuration"].as_str().expect("a configuration");
        let conf = json(&format!("editors/vscode/{config}"));
        assert!(conf["comments"]["lineComment"].is_string(), "{config}");
        assert!(conf["brackets"].as_array().is_some_and(|b| !b.is_empty()));
        let g = grammars
            .iter()
            .find(|g| g["language"] == id)
            .unwrap_or_else(|| panic!("no grammar for `{id}`"));
        assert_eq!(g["scopeName"], scope);
        let path = g["path"].as_str().expect("a grammar path");
        assert!(dir.join(path).is_file(), "{path}");
        Grammar::load(&format!("editors/vscode/{path}"), scope);
    }
    let ad = json("editors/vscode/language-configuration.json");
    assert_eq!(ad["comments"]["lineComment"], "//");
    assert_eq!(ad["comments"]["blockComment"][0], "/*");
}

#[test]
fn the_ad_grammar_knows_every_keyword_and_builtin() {
    let g = Grammar::load("editors/vscode/syntaxes/ad.tmLanguage.json", "source.ad");
    let kw = ["keyword.", "storage.", "constant.language."];
    for k in lexer_keywords() {
        assert_scoped(&g, &format!("{k} "), &k, &kw, "keyword");
        // Not inside a longer name.
        assert_scoped(
            &g,
            &format!("{k}_x = 1;"),
            &format!("{k}_x"),
            &["variable."],
            "name",
        );
        assert_scoped(
            &g,
            &format!("x{k} = 1;"),
            &format!("x{k}"),
            &["variable."],
            "name",
        );
    }
    for b in frontend_builtins() {
        let line = format!("y = {b}(x);");
        assert_scoped(&g, &line, &b, &["support.function."], "built-in");
    }
    for a in ATTRIBUTES {
        let line = format!("[{a}(df, Active)]");
        assert_scoped(&g, &line, a, &["entity.other.attribute-name."], "attribute");
    }
    for a in adc_ir::Activity::ALL {
        let line = format!("[autodiff_reverse(df, {a})]");
        assert_scoped(&g, &line, a.name(), &["support.constant."], "activity");
    }
    // A view is an integer and `..`, not a float.
    assert_scoped(
        &g,
        "f(a[2..n]);",
        "2",
        &["constant.numeric.integer"],
        "view",
    );
    assert_scoped(
        &g,
        "x = 2.5e-3f;",
        "2.5e-3f",
        &["constant.numeric.float"],
        "float",
    );
    assert_scoped(&g, "g(x);", "g", &["entity.name.function"], "call");
    // Indexing is not an attribute.
    assert_scoped(&g, "y = a[i];", "i", &["variable."], "index");
    // Comments, also across lines.
    let s = g.scopes("x = 1; /* a\nint b */ y = 2;");
    assert_eq!(s[1][0].as_deref(), Some("comment.block.ad"));
    assert_eq!(s[1][9].as_deref(), Some("variable.other.ad"));
}

#[test]
fn the_ad_grammar_covers_the_examples_and_the_docs() {
    let g = Grammar::load("editors/vscode/syntaxes/ad.tmLanguage.json", "source.ad");
    let mut n = 0;
    for path in support::files("examples", "ad") {
        assert_all_scoped(&g, &support::read(&path), &support::name(&path));
        n += 1;
    }
    for path in support::files("docs", "md") {
        let text = support::read(&path);
        let mut in_ad = false;
        let mut block = String::new();
        for line in text.lines() {
            // Blocks marked `error=` are invalid on purpose.
            if line == "```ad" || (line.starts_with("```ad ") && !line.contains("error=")) {
                in_ad = true;
                block.clear();
            } else if in_ad && line.starts_with("```") {
                in_ad = false;
                assert_all_scoped(&g, &block, &support::name(&path));
                n += 1;
            } else if in_ad {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    assert!(n >= 50, "only {n} programs");
}

/// The first words of the instruction and signature texts the IR printer
/// writes (`load{}` is `load`; `{}.push` and other placeholders are left
/// out: the tape opcodes are listed in the test).
fn printer_words() -> Vec<String> {
    let src = support::read(&support::root().join("crates/ir/src/print.rs"));
    let src = &src[..src.find("fn tape_name").expect("tape_name")];
    let mut words = Vec::new();
    for lit in src.split('"').skip(1).step_by(2) {
        let first = lit.split(['{', ' ']).find(|w| !w.is_empty()).unwrap_or("");
        if first.starts_with(|c: char| c.is_ascii_lowercase())
            && first
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            words.push(first.to_string());
        }
    }
    words.sort();
    words.dedup();
    assert!(words.len() >= 40, "found only {words:?}");
    words
}

#[test]
fn the_ir_grammar_knows_every_opcode() {
    let g = Grammar::load(
        "editors/vscode/syntaxes/adir.tmLanguage.json",
        "source.adir",
    );
    let want = ["keyword.", "storage.", "support.", "constant.language."];
    let mut words = printer_words();
    words.extend(adc_ir::UnaryOp::ALL.iter().map(|o| o.name().to_string()));
    words.extend(adc_ir::BinaryOp::ALL.iter().map(|o| o.name().to_string()));
    words.extend(adc_ir::CmpCond::ALL.iter().map(|o| o.name().to_string()));
    words.extend(adc_ir::MathFunc::ALL.iter().map(|o| o.name().to_string()));
    words.extend(adc_ir::Activity::ALL.iter().map(|o| o.name().to_string()));
    for t in [
        "bool", "i64", "f32", "f64", "arr", "ref", "dpair", "diff", "mixed", "auto",
    ] {
        words.push(t.to_string());
    }
    for t in ["tape", "tape1", "tape12"] {
        for op in ["push", "pop", "read"] {
            words.push(format!("{t}.{op}"));
        }
    }
    for w in &words {
        let line = match w.as_str() {
            // Signatures start at the start of a line.
            "func" | "extern" | "static" => format!("{w} @f(x: f64) -> f64"),
            _ => format!("    {w} v1"),
        };
        assert_scoped(&g, &line, w, &want, "IR word");
    }
    // Dotted opcodes are one token, and a value is not a keyword.
    assert_scoped(
        &g,
        "    v2: f64 = load.unchecked v0, v1",
        "load.unchecked",
        &want,
        "opcode",
    );
    assert_scoped(
        &g,
        "    v3: f64 = diff dpair.diff v2",
        "dpair.diff",
        &want,
        "opcode",
    );
    assert_scoped(
        &g,
        "    checkpoint.loop 8",
        "checkpoint.loop",
        &want,
        "opcode",
    );
    assert_scoped(
        &g,
        "    v2: f64 = add v0, v1",
        "v1",
        &["variable."],
        "value",
    );
    assert_scoped(
        &g,
        "    jump block3(v1)",
        "block3",
        &["entity.name.label"],
        "block",
    );
    assert_scoped(
        &g,
        "    v1: f64 = const -1.5e-3",
        "-1.5e-3",
        &["constant.numeric"],
        "number",
    );
}

#[test]
fn the_ir_grammar_covers_the_ir_tests() {
    let g = Grammar::load(
        "editors/vscode/syntaxes/adir.tmLanguage.json",
        "source.adir",
    );
    let mut n = 0;
    let root = support::root().join("tests/ir");
    let mut dirs = vec![root];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("tests/ir") {
            let p = e.expect("directory entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "adir") {
                let rel = p.strip_prefix(support::root()).unwrap_or(Path::new(""));
                assert_all_scoped(&g, &support::read(&p), &rel.display().to_string());
                n += 1;
            }
        }
    }
    assert!(n >= 30, "only {n} IR files");
}
