//! The whole text of `adc`'s usage errors and human-readable output, where
//! newcomers trip: wrong `--args` and `--tangent`, a missing entry, the
//! gradient without `--json`, `adc explain`, and the help of every
//! subcommand.

use crate::common::{adc, scratch, stderr, stdout};

const ENERGY: &str = "
double energy(double[] x, double k, int n) {
    double e = 0.0;
    for (int i = 0; i + 1 < n; i++) {
        double d = x[i + 1] - x[i];
        e += 0.5 * k * d * d;
    }
    return e;
}
double f(double x, double[] ys) { return x * ys[0]; }
";

/// Runs `adc run FILE ARGS...` on `ENERGY`; returns (status, stdout, stderr).
fn run(name: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let p = scratch(name, ENERGY);
    let mut all = vec!["run", p.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    let o = adc(&all);
    (o.status.code(), stdout(&o), stderr(&o))
}

fn usage_error(name: &str, args: &[&str], want: &str) {
    let (code, out, err) = run(name, args);
    assert_eq!(err, want, "{args:?}");
    assert_eq!((code, out.as_str()), (Some(2), ""), "{args:?}");
}

#[test]
fn wrong_number_of_args_lists_the_parameters() {
    usage_error(
        "count.ad",
        &["--entry", "f", "--args", "[1, [2], 3]"],
        "error: `--args` has 3 values, but `f` takes 2 parameters: `double x, double[] ys`\n",
    );
    usage_error(
        "missing.ad",
        &["--entry", "energy"],
        "error: `energy` takes 3 parameters: `double[] x, double k, int n`\n  \
         pass their values with `--args`, as in `--args '[[1.0, 1.0], 1.0, 1]'`\n",
    );
    usage_error(
        "elem.ad",
        &["--entry", "f", "--args", "[1, [2, true]]"],
        "error: argument `ys`: expected an array of numbers, found `[2,true]`\n",
    );
}

/// `--tangent` and `--args` share one reader of JSON: invalid JSON says
/// what is wrong and where, also when read from a file.
#[test]
fn invalid_json_says_where() {
    let energy = ["--entry", "energy", "--args", "[[0, 1, 3], 2, 3]"];
    usage_error(
        "tangent_json.ad",
        &[&energy[..], &["--tangent", "[1,"]].concat(),
        "error: `--tangent` is not valid JSON: EOF while parsing a value at line 1 column 3\n",
    );
    usage_error(
        "args_json.ad",
        &["--entry", "energy", "--args", "[[0, 1, 3], 2, 3"],
        "error: `--args` is not valid JSON: EOF while parsing a list at line 1 column 16\n",
    );
    usage_error(
        "args_object.ad",
        &["--entry", "energy", "--args", "{}"],
        "error: `--args` must be a JSON array with one value per parameter, found `{}`\n",
    );
    let file = scratch("tangent.json", "[[0, 0, 1],\n 0, nul]");
    let at_file = format!("@{}", file.display());
    usage_error(
        "tangent_file.ad",
        &[&energy[..], &["--tangent", &at_file]].concat(),
        "error: `--tangent` is not valid JSON: expected ident at line 2 column 8\n",
    );
    let good = scratch("tangent_good.json", "[[0, 0, 1], 0, null]");
    let (code, out, err) = run(
        "tangent_good.ad",
        &[&energy[..], &["--tangent", &format!("@{}", good.display())]].concat(),
    );
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (Some(0), "result: 5.0\ntangent: 4.0\n", "")
    );
}

#[test]
fn wrong_number_of_tangents_names_the_parameters() {
    usage_error(
        "tangent_count.ad",
        &[
            "--entry",
            "energy",
            "--args",
            "[[0, 1, 3], 2, 3]",
            "--tangent",
            "[1]",
        ],
        "error: `--tangent` has 1 value, but `energy` takes 3 parameters: `double[] x, double k, int n`\n  \
         give one tangent per parameter, `null` for `n` (no derivative)\n",
    );
}

#[test]
fn a_missing_entry_lists_the_functions() {
    usage_error(
        "no_main.ad",
        &[],
        "error: no function `main` to run\n  \
         the file defines `energy`, `f`; choose one with `--entry NAME`\n",
    );
    usage_error(
        "typo.ad",
        &["--entry", "enrgy", "--grad"],
        "error: no function `enrgy` to run; did you mean `--entry energy`?\n  \
         the file defines `energy`, `f`; choose one with `--entry NAME`\n",
    );
}

/// Without `--json`, `--grad` prints the result and one line per
/// parameter (docs/cli.md).
#[test]
fn gradient_without_json_is_for_people() {
    let (code, out, err) = run(
        "grad_text.ad",
        &["--entry", "energy", "--args", "[[0, 1, 3], 2, 3]", "--grad"],
    );
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert_eq!(
        out,
        "result: 5.0\n\
         d/dx = [-2.0, -2.0, 4.0]\n\
         d/dk = 2.5\n\
         d/dn: none (`int n` has no derivative)\n"
    );
}

#[test]
fn hessian_needs_a_float_result_and_prints_rows() {
    let src = "double f(double x, double[] ys) { return x * x * ys[0]; }\nvoid g(double x) { }\n";
    let p = scratch("hess.ad", src);
    let path = p.to_str().expect("utf-8 path");
    let o = adc(&[
        "run",
        path,
        "--entry",
        "f",
        "--args",
        "[3, [2]]",
        "--hessian",
    ]);
    assert_eq!((o.status.code(), stderr(&o).as_str()), (Some(0), ""));
    assert_eq!(
        stdout(&o),
        "result: 18.0\nhessian: [[4.0, 6.0], [6.0, 0.0]]\n"
    );
    let o = adc(&["run", path, "--entry", "g", "--args", "[3]", "--hessian"]);
    assert_eq!(
        (o.status.code(), stderr(&o).as_str()),
        (
            Some(2),
            "error: `--hessian` needs an entry that returns `float` or `double`; `g` does not\n"
        )
    );
}

/// `--jacobian` of an entry that returns a tuple was a compile error (exit
/// 1) quoting the source line with the `[jacobian(adc_cli_jacobian)]` the
/// command had written into it; it is a usage error now (found by a new
/// user, 2026-11-30).
#[test]
fn jacobian_of_a_tuple_result_is_a_usage_error() {
    let src = "(double, double) polar(double x, double y) { return (hypot(x, y), atan2(y, x)); }\n";
    let p = scratch("polar.ad", src);
    let path = p.to_str().expect("utf-8 path");
    let o = adc(&[
        "run",
        path,
        "--entry",
        "polar",
        "--args",
        "[3, 4]",
        "--jacobian",
    ]);
    assert_eq!(
        (o.status.code(), stderr(&o).as_str(), stdout(&o).as_str()),
        (
            Some(2),
            "error: `--jacobian`: `jacobian` on `polar`, which returns a tuple, is not supported yet\n",
            ""
        )
    );
}

/// `adc explain` prints plain text: no fence tags, no link targets in
/// Markdown syntax.
#[test]
fn explain_prints_plain_text() {
    let o = adc(&["explain", "E0102"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        "E0102: `break` or `continue` outside of a loop\n\
         \n\
         `break` and `continue` apply to the innermost enclosing `for` or `while` loop; outside of any loop they mean nothing.\n\
         \n\
         ```\n\
         double f(double x) {\n    if (x > 0.0) {\n        break;\n    }\n    return x;\n}\n\
         ```\n"
    );
    // E0129 links to docs/arrays.md.
    let o = adc(&["explain", "E0129"]);
    let text = stdout(&o);
    assert!(
        text.contains("(arrays and views (docs/arrays.md#the-aliasing-rule))"),
        "{text}"
    );
    assert!(!text.contains("](") && !text.contains("```ad"), "{text}");
}

/// Every argument of every subcommand has a help line.
#[test]
fn every_argument_has_help() {
    for sub in ["check", "run", "compile", "tape", "ir", "explain"] {
        let o = adc(&[sub, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{sub}");
        let text = stdout(&o);
        let mut in_list = false;
        for line in text.lines() {
            if line.ends_with(':') && !line.starts_with(' ') {
                in_list = matches!(line, "Arguments:" | "Options:");
                continue;
            }
            if in_list && line.starts_with("  ") {
                // `  <FILE>  The ...`, `      --entry <NAME>  The ...`.
                let words: Vec<&str> = line.trim().split("  ").filter(|w| !w.is_empty()).collect();
                assert!(words.len() >= 2, "`adc {sub} --help`: no help for `{line}`");
            }
        }
    }
    let o = adc(&["run", "--help"]);
    assert_eq!(
        stdout(&o),
        "Compile with the JIT and call a function

Usage: adc run [OPTIONS] <FILE>

Arguments:
  <FILE>  The `.ad` source file (or textual IR: `.adir`, or IR text under another name)

Options:
      --entry <NAME>                 The function to call [default: main]
      --args <JSON>                  The arguments: a JSON array with one value per parameter (`'[1.5, [1, 2, 3]]'`); `@FILE` reads it from a file, `@-` from standard input
      --grad                         Also compute the gradient of the entry's result (reverse mode, seed 1, default activities)
      --jacobian                     Also compute the dense Jacobian of the entry (docs/derivatives.md), printed as rows
      --hessian                      Also compute the dense Hessian of the entry's float result (docs/derivatives.md), printed as rows
      --tangent <JSON>               Forward mode: a JSON array with one tangent per parameter (`null` for parameters without a derivative); `@FILE` and `@-` as for `--args`
      --error-format <ERROR_FORMAT>  How diagnostics are written to stderr: `human` (source lines and carets) or `json` (one object per line, for tools) [default: human] [possible values: human, json]
      --json                         Print one JSON object as the last line of stdout
      --fp-contract                  Fuse a float multiply used only by an add or subtract into one multiply-add rounded once, where the machine has it (as C compilers do; results can differ in the last bit)
  -h, --help                         Print help
"
    );
}
