//! The documentation in `docs/` (and the top-level README's example) is
//! tested:
//!
//! - every ` ```ad ` block compiles as `adc check` compiles it, or, marked
//!   `error=CODE`, is rejected with a diagnostic of that code;
//! - every ` ```console ` block is run: its `$ adc ...` (and `$ cc ...`,
//!   `$ cat FILE`, `$ ./prog`) lines run in a scratch directory holding the blocks of the
//!   same file marked `file=NAME`, and what follows each command is its
//!   standard output, then its standard error (a line `...` stands for any
//!   number of lines); the exit status must be 3 when the output shows a
//!   runtime error, 2 for a usage error (`error: ...`), 1 for diagnostics
//!   (`[E....]`), else 0;
//! - `docs/errors.md` has one entry (`## EXXXX: title`) per code that the
//!   compiler's source defines and none other, each with an example that
//!   produces its code, and `adc explain CODE` prints the entry;
//! - ` ```rust ` blocks are doctests: a file holding one must be included
//!   by `crates/adc/src/lib.rs`.
//! - README.md stays one screen (at most 80 lines of at most 200
//!   characters), and relative links of every page resolve.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    // CARGO_MANIFEST_DIR is crates/cli (the package of the `adc` binary).
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn docs() -> Vec<(String, String)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p
                .file_name()
                .and_then(|n| n.to_str())
                .expect("utf-8 file name")
                .to_string();
            let text = std::fs::read_to_string(&p).expect("readable docs file");
            (name, text)
        })
        .collect()
}

/// A fenced code block.
#[derive(Debug)]
struct Block {
    lang: String,
    attrs: Vec<(String, String)>,
    body: String,
    /// 1-based line of the opening fence.
    line: usize,
    /// The level-2 heading the block stands under.
    section: String,
}

impl Block {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        if let Some(h) = line.strip_prefix("## ") {
            section = h.trim().to_string();
            continue;
        }
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let mut words = info.split_whitespace();
        let lang = words.next().unwrap_or("").to_string();
        let attrs = words
            .map(|w| match w.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => (w.to_string(), String::new()),
            })
            .collect();
        let mut body = String::new();
        let mut closed = false;
        for (_, l) in lines.by_ref() {
            if l.trim_end() == "```" {
                closed = true;
                break;
            }
            body.push_str(l);
            body.push('\n');
        }
        assert!(closed, "line {}: unclosed code block", n + 1);
        out.push(Block {
            lang,
            attrs,
            body,
            line: n + 1,
            section: section.clone(),
        });
    }
    out
}

/// `adc check`'s pipeline in process: `Err` holds the diagnostics' codes
/// and the rendered text.
fn check(name: &str, source: &str) -> Result<(), (Vec<&'static str>, String)> {
    adc::driver::compile_object(name, source, "ADC_DOCS_H", &adc::CompileOptions::default())
        .map(|_| ())
        .map_err(|f| (f.diagnostics.iter().map(|d| d.code).collect(), f.rendered))
}

fn check_ad_block(file: &str, b: &Block) {
    let name = b.attr("file").unwrap_or("example.ad");
    match (check(name, &b.body), b.attr("error")) {
        (Ok(()), None) => {}
        (Err((_, text)), None) => panic!("{file}:{}: does not compile:\n{text}", b.line),
        (Ok(()), Some(code)) => panic!("{file}:{}: compiles, want {code}", b.line),
        (Err((codes, text)), Some(code)) => assert!(
            codes.contains(&code),
            "{file}:{}: want {code}, got:\n{text}",
            b.line
        ),
    }
}

/// Splits a command line into words: blanks separate, quotes group.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                cur.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => out.extend(cur.take()),
            (None, c) => cur.get_or_insert_with(String::new).push(c),
        }
    }
    assert!(quote.is_none(), "unclosed quote in `{line}`");
    out.extend(cur);
    out
}

/// `want` lines against `got` lines, trailing blanks ignored; a `want`
/// line `...` matches any number of lines.
fn matches(want: &[&str], got: &[&str]) -> bool {
    match want.split_first() {
        None => got.is_empty(),
        Some((&"...", rest)) => (0..=got.len()).any(|k| matches(rest, &got[k..])),
        Some((w, rest)) => {
            got.first().is_some_and(|g| g.trim_end() == w.trim_end()) && matches(rest, &got[1..])
        }
    }
}

fn expected_status(output: &str) -> i32 {
    if output.contains("runtime error:") {
        3
    } else if output.lines().any(|l| l.starts_with("error:")) {
        2
    } else if output.contains("[E0") || output.contains("\"severity\":\"error\"") {
        1
    } else {
        0
    }
}

fn have_cc() -> bool {
    Command::new("cc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs one console block in `dir`.
fn run_console(file: &str, b: &Block, dir: &Path) {
    let mut commands: Vec<(String, Vec<&str>)> = Vec::new();
    for line in b.body.lines() {
        match line.strip_prefix("$ ") {
            Some(cmd) => commands.push((cmd.to_string(), Vec::new())),
            None => match commands.last_mut() {
                Some((_, out)) => out.push(line),
                None => panic!("{file}:{}: output before a command", b.line),
            },
        }
    }
    assert!(!commands.is_empty(), "{file}:{}: no command", b.line);
    for (cmd, mut want) in commands {
        while want.last().is_some_and(|l| l.trim().is_empty()) {
            want.pop();
        }
        let w = words(&cmd);
        let program = match w[0].as_str() {
            "adc" => PathBuf::from(env!("CARGO_BIN_EXE_adc")),
            "cc" if !have_cc() => {
                eprintln!("{file}:{}: no `cc`, block skipped", b.line);
                return;
            }
            "cc" => PathBuf::from("cc"),
            "cat" => PathBuf::from("cat"),
            p if p.starts_with("./") => dir.join(p),
            p => panic!("{file}:{}: cannot run `{p}` in a test", b.line),
        };
        let out = Command::new(&program)
            .args(&w[1..])
            .current_dir(dir)
            .output()
            .unwrap_or_else(|e| panic!("{file}:{}: cannot run `{cmd}`: {e}", b.line));
        let got = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let got_lines: Vec<&str> = got.lines().collect();
        assert!(
            matches(&want, &got_lines),
            "{file}:{}: `{cmd}` printed\n{got}\nwant\n{}",
            b.line,
            want.join("\n")
        );
        let status = expected_status(&want.join("\n"));
        assert_eq!(
            out.status.code(),
            Some(status),
            "{file}:{}: `{cmd}` exit status\n{got}",
            b.line
        );
    }
}

fn scratch(file: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("adc-docs-{}", std::process::id()))
        .join(file.trim_end_matches(".md"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// Checks one page's blocks (`file` names it in messages and in the
/// scratch directory): compiles its `ad` blocks, runs its `console`
/// blocks; returns how many of each.
fn check_page(file: &str, text: &str) -> (usize, usize) {
    let (mut ad_blocks, mut consoles) = (0, 0);
    let bs = blocks(text);
    let dir = scratch(file);
    for b in &bs {
        if let Some(name) = b.attr("file") {
            std::fs::write(dir.join(name), &b.body).expect("write example file");
        }
    }
    for b in &bs {
        match b.lang.as_str() {
            "ad" => {
                check_ad_block(file, b);
                ad_blocks += 1;
            }
            "console" => {
                run_console(file, b, &dir);
                consoles += 1;
            }
            "rust" => {
                let lib =
                    std::fs::read_to_string(root().join("crates/adc/src/lib.rs")).expect("lib.rs");
                assert!(
                    lib.contains(&format!("docs/{file}")),
                    "{file}:{}: a rust block in a file lib.rs does not include as doctests",
                    b.line
                );
            }
            "" => panic!("{file}:{}: code block without a language", b.line),
            _ => {}
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    // The directory of all pages goes once it is empty (other tests may
    // still be using it).
    let _ = std::fs::remove_dir(dir.parent().expect("scratch has a parent"));
    (ad_blocks, consoles)
}

#[test]
fn docs_examples_compile_and_print_what_they_show() {
    let files = docs();
    let mut ad_blocks = 0;
    let mut consoles = 0;
    for (file, text) in &files {
        // The error index grows with the codes; the other pages stay short.
        let lines = text.lines().count();
        assert!(
            file == "errors.md" || lines <= 650,
            "{file}: {lines} lines; split it"
        );
        let (ads, cons) = check_page(file, text);
        ad_blocks += ads;
        consoles += cons;
    }
    assert!(files.len() >= 7, "docs/ has too few files");
    assert!(ad_blocks >= 70, "only {ad_blocks} ad blocks");
    assert!(consoles >= 30, "only {consoles} console blocks");
}

/// The README is one screen for users: short lines, its example run as
/// the pages' are (its `console` blocks and `ad` blocks with `file=`).
#[test]
fn readme_is_short_and_its_example_runs() {
    let text = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let lines = text.lines().count();
    assert!(
        lines <= 80,
        "README.md: {lines} lines; move details into docs/"
    );
    for (n, l) in text.lines().enumerate() {
        let chars = l.chars().count();
        assert!(chars <= 200, "README.md:{}: {chars} characters", n + 1);
    }
    // CI runs the README's test command (its second `sh` block), verbatim.
    let commands: Vec<&str> = text
        .split("```sh\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .map(str::trim)
        .collect();
    assert!(commands.len() >= 2, "README.md: no test command");
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run");
    assert!(
        ci.lines().any(|line| line.trim() == commands[1]),
        ".ci/run does not run the README's test command `{}`",
        commands[1]
    );
    let (ad_blocks, consoles) = check_page("README.md", &text);
    assert!(ad_blocks >= 1 && consoles >= 1, "README.md: no example");
}

/// Every `"EXXXX"` string literal in the compiler's sources.
fn source_codes() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).expect("source directory") {
            let p = e.expect("directory entry").path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs" || e == "lalrpop") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root().join("crates")).expect("crates/") {
        let src = krate.expect("directory entry").path().join("src");
        if src.is_dir() {
            walk(&src, &mut files);
        }
    }
    let mut codes = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("source file");
        let b = text.as_bytes();
        for i in 0..b.len().saturating_sub(6) {
            if b[i] == b'"'
                && (b[i + 1] == b'E' || b[i + 1] == b'W')
                && b[i + 2..i + 6].iter().all(u8::is_ascii_digit)
                && b[i + 6] == b'"'
            {
                codes.push(text[i + 1..i + 6].to_string());
            }
        }
    }
    codes.sort();
    codes.dedup();
    codes
}

/// Codes no small example produces: E0006 needs 200,000 levels of nesting
/// (this test builds the program); no program is known to produce the
/// others (a guard of a conversion that cannot fail, internal errors).
const GENERATED: &str = "E0006";
const UNREACHABLE: &[&str] = &["E0113", "E0900", "E0999"];

fn error_entries() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root().join("docs/errors.md")).expect("docs/errors.md");
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            let code = h.split(':').next().unwrap_or("").trim().to_string();
            entries.push((code, String::new()));
        } else if let Some((_, body)) = entries.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    entries
}

#[test]
fn every_error_code_has_an_entry_with_an_example() {
    let codes = source_codes();
    assert!(codes.len() >= 40, "found only {} codes", codes.len());
    let entries = error_entries();
    let documented: Vec<&str> = entries.iter().map(|(c, _)| c.as_str()).collect();
    for c in &codes {
        assert!(
            documented.contains(&c.as_str()),
            "{c} is in the source but not in docs/errors.md"
        );
    }
    let mut sorted = documented.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(
        sorted, documented,
        "docs/errors.md: entries out of order or repeated"
    );
    let text = std::fs::read_to_string(root().join("docs/errors.md")).expect("docs/errors.md");
    let bs = blocks(&text);
    for (code, body) in &entries {
        assert!(
            codes.contains(code),
            "docs/errors.md has {code}, which the source does not define"
        );
        let paragraph = body.lines().filter(|l| !l.trim().is_empty()).count();
        assert!(paragraph >= 2, "{code}: no explanation");
        let in_entry = |b: &&Block| b.section.starts_with(&format!("{code}:"));
        let shown = bs.iter().filter(in_entry).any(|b| match b.lang.as_str() {
            // The blocks themselves are checked by the test above.
            "ad" => b.attr("error") == Some(code.as_str()),
            "console" => b.body.contains(&format!("[{code}]")),
            _ => false,
        });
        if code == GENERATED || UNREACHABLE.contains(&code.as_str()) {
            continue;
        }
        assert!(
            shown,
            "{code}: no example (an `ad error={code}` block, or a console block printing it)"
        );
    }
    for c in UNREACHABLE {
        let (_, body) = entries
            .iter()
            .find(|(e, _)| e == c)
            .expect("these codes are documented (checked above)");
        assert!(
            body.contains("o program is known to produce"),
            "{c}: say that no program is known to produce it"
        );
    }
}

/// E0006's example: a sum nested more than `MAX_DEPTH` levels.
#[test]
fn nesting_too_deep_is_e0006() {
    let terms = adc_frontend::MAX_DEPTH + 2;
    let sum = vec!["x"; terms].join(" + ");
    let source = format!("double f(double x) {{ return {sum}; }}\n");
    let (codes, _) = check("deep.ad", &source).expect_err("too deep");
    assert_eq!(codes, vec![GENERATED]);
}

#[test]
fn explain_prints_the_entry() {
    for (code, body) in error_entries() {
        let out = Command::new(env!("CARGO_BIN_EXE_adc"))
            .args(["explain", &code])
            .output()
            .expect("run adc");
        assert_eq!(out.status.code(), Some(0), "adc explain {code}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.starts_with(&format!("{code}:")), "{code}: {text}");
        // Plain text: every line of the entry, but fences lose their tags
        // (```` ```ad error=E0116 ```` is ```` ``` ````) and links show
        // their target after the text.
        let printed: Vec<&str> = text.lines().collect();
        for line in body.trim().lines() {
            let want = if line.starts_with("```") { "```" } else { line };
            if !want.contains("](") {
                assert!(
                    printed.contains(&want),
                    "{code}: `{want}` missing in\n{text}"
                );
            }
        }
        assert!(!text.contains("```ad"), "{code}: {text}");
    }
    for bad in ["E9999", "E01", "nonsense"] {
        let out = Command::new(env!("CARGO_BIN_EXE_adc"))
            .args(["explain", bad])
            .output()
            .expect("run adc");
        assert_eq!(out.status.code(), Some(2), "adc explain {bad}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("no error code"),
            "adc explain {bad}"
        );
    }
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, blanks
/// turned into `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(text: &str) -> Vec<String> {
    let mut in_code = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            out.push(slug(line.trim_start_matches('#')));
        }
    }
    out
}

/// Relative links between the pages of `docs/` and the top-level pages
/// (and to the rest of the repository) lead to files and headings that
/// exist.
#[test]
fn links_resolve() {
    let docs_dir = root().join("docs");
    let mut pages: Vec<(PathBuf, String, String)> = docs()
        .into_iter()
        .map(|(file, text)| (docs_dir.clone(), file, text))
        .collect();
    for file in ["README.md", "ARCHITECTURE.md", "CHANGELOG.md"] {
        let text = std::fs::read_to_string(root().join(file)).expect("a top-level page");
        pages.push((root(), file.to_string(), text));
    }
    let mut n = 0;
    for (base, file, text) in pages {
        for part in text.split("](").skip(1) {
            let Some(target) = part.split(')').next() else {
                continue;
            };
            if target.contains("://") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target, None),
            };
            let page = if path.is_empty() {
                base.join(&file)
            } else {
                base.join(path)
            };
            assert!(page.exists(), "{file}: link to `{target}`: no such file");
            if let Some(a) = anchor {
                let linked = std::fs::read_to_string(&page).expect("a linked page");
                assert!(
                    anchors(&linked).iter().any(|h| h == a),
                    "{file}: link to `{target}`: no such heading"
                );
            }
            n += 1;
        }
    }
    assert!(n >= 20, "only {n} links");
}

/// Every path ARCHITECTURE.md names exists, so that renaming a file shows
/// where the map must change: each backticked word (no blanks) holding a
/// `/`, or a file name ending in `.rs`, `.md`, `.ad` or `.adir`, relative
/// to the repository's root (directories too). Every directory of
/// `tests/ir` (a pass's filetests) is named there as a pass, and lines
/// stay short.
#[test]
fn architecture_names_files_that_exist() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut words: Vec<&str> = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        let chars = line.chars().count();
        assert!(
            chars <= 120,
            "ARCHITECTURE.md: {chars} characters in `{line}`"
        );
        if !in_code {
            // Odd pieces between backticks are inline code.
            words.extend(line.split('`').skip(1).step_by(2));
        }
    }
    let is_path = |w: &str| {
        !w.contains(char::is_whitespace)
            && (w.contains('/')
                || [".rs", ".md", ".ad", ".adir"]
                    .iter()
                    .any(|e| w.ends_with(e) && w.len() > e.len()))
    };
    let mut n = 0;
    for w in words.iter().filter(|w| is_path(w)) {
        assert!(
            root().join(w).exists(),
            "ARCHITECTURE.md names `{w}`, which does not exist"
        );
        n += 1;
    }
    assert!(n >= 40, "only {n} paths in ARCHITECTURE.md");
    for e in std::fs::read_dir(root().join("tests/ir")).expect("tests/ir") {
        let name = e.expect("directory entry").file_name();
        let name = name.to_str().expect("utf-8 name");
        if name != "parser" && name != "verifier" {
            assert!(
                words.contains(&name),
                "ARCHITECTURE.md does not name the pass `{name}` (tests/ir/{name})"
            );
        }
    }
}
