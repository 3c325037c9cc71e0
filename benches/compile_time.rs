//! Benchmark (not a test): compile time against program size, for the
//! shapes that once grew quadratically or worse (issue 10):
//!
//! - `ifs`: n sequential `if/else` statements in one function;
//! - `chain`: one `else if` chain of n arms;
//! - `straight`: n lines of straight-line arithmetic;
//! - `flat sum`: one expression of n terms;
//! - `hessian sum`, `jacobian sum`: one expression of n terms `x*x` under
//!   `[hessian]` or `[jacobian]` (`dce` once removed a dead chain one
//!   instruction per round, `transpose` once searched the whole block
//!   for each lane group's instructions: O(n^2));
//! - `wide jacobian`, `wide sparse jacobian`, `wide hessian`, `wide
//!   sparse hessian`: a function of n scalar parameters under `[jacobian]`
//!   or `[hessian]`, dense or sparse (the frontend once gave every join a
//!   parameter per variable, O(n^2) in the wrappers' loops; `rle` once
//!   scanned every element it knew at each store);
//! - `hessian chain`: an `else if` chain of n arms under `[hessian]`;
//! - `nested ifs`: n `if`s nested around one assignment;
//! - `locals`: n locals declared in one block, then each read;
//! - `call chain`: n one-line functions, each calling the next (`inline`
//!   once searched the rest of the chain from each callee, O(n^2));
//! - `call tree`: n functions, each calling the next twice;
//! - `many calls`: n small branching functions, called in turn by `f`
//!   (with `grad`, each call that stays a call gets a split-mode
//!   derivative: `fast-path` once scanned the module per continuation);
//! - `nested calls`: one expression of n calls nested in each other.
//!
//! Each shape is compiled at two or three sizes, without derivatives
//! (`primal`) and with a `--grad` request for `f` (`grad`: its reverse
//! mode, as `adc run --entry f --grad` builds it). The table shows the milliseconds of each stage
//! (frontend with verification, derivative passes, `opt`, codegen with the
//! JIT) and the total's ratio to the previous size: doubling n should
//! roughly double the time (ratio about 2).
//!
//! Run: `cargo bench --bench compile_time` (`-- quick` for the two smaller
//! sizes only; other words pick the shapes whose names contain one of
//! them: `-- quick call`).

use adc::derivs::{add_request, Request};
use adc::driver;
use std::time::Instant;

fn ifs(n: usize) -> String {
    let mut s = String::from("double f(double x) {\n  double y = x;\n");
    for i in 0..n {
        s += &format!(
            "  if (y > {}.5) {{ y = y * 0.99 + {}.0; }} else {{ y = y * 1.01 - 0.5; }}\n",
            i % 7,
            i % 5
        );
    }
    s + "  return y;\n}\ndouble main() { return f(1.5); }\n"
}

fn chain(n: usize) -> String {
    let mut s = String::from("double f(double x, int k) {\n  double y = 0.0;\n");
    s += "  if (k == 0) { y = x; }\n";
    for i in 1..n {
        s += &format!("  else if (k == {i}) {{ y = x * {i}.0; }}\n");
    }
    s += "  else { y = -x; }\n";
    s + "  return y;\n}\ndouble main() { return f(1.5, 3); }\n"
}

fn straight(n: usize) -> String {
    let mut s = String::from("double f(double x, double z) {\n  double a = x;\n  double b = z;\n");
    for i in 0..n {
        s += &match i % 3 {
            0 => "  a = a * 0.999 + sin(b) * 0.001;\n".to_string(),
            1 => format!("  b = b + a * {}.0e-4;\n", 1 + i % 4),
            _ => "  a = a - b * b * 1.0e-5;\n".to_string(),
        };
    }
    s + "  return a + b;\n}\ndouble main() { return f(1.5, 0.5); }\n"
}

/// One expression: a sum of `n` products (a block of 2n instructions;
/// codegen once measured a run of like instructions at every one of them,
/// O(n^2)).
fn flat_sum(n: usize) -> String {
    let terms: Vec<String> = (0..n).map(|i| format!("x * {}.0", 1 + i % 7)).collect();
    format!(
        "double f(double x, double z) {{\n  return {};\n}}\ndouble main() {{ return f(1.5, 0.5); }}\n",
        terms.join(" + ")
    )
}

/// `x*x + x*x + ...`, `n` terms, under `attribute` (on `f`).
fn matrix_sum(n: usize, attribute: &str) -> String {
    format!(
        "{attribute}\ndouble f(double x, double z) {{\n  return {};\n}}\ndouble main() {{ return f(1.5, 0.5); }}\n",
        vec!["x*x"; n].join("+")
    )
}

fn hessian_sum(n: usize) -> String {
    matrix_sum(n, "[hessian(H)]")
}

fn jacobian_sum(n: usize) -> String {
    matrix_sum(n, "[jacobian(J)]")
}

/// `f` of `n` scalar parameters, each read by a product with its
/// neighbour and a `sin`, under `attribute`: the wrappers of `[jacobian]`
/// and `[hessian]` have a loop or two per parameter, so the frontend's
/// joins once took a parameter per variable each (O(n^2) block
/// parameters), and `rle` once scanned every known element per store.
fn wide(n: usize, attribute: &str) -> String {
    let params: Vec<String> = (0..n).map(|i| format!("double x{i}")).collect();
    let mut s = format!(
        "{attribute}\ndouble f({}) {{\n  double s = 0.0;\n",
        params.join(", ")
    );
    for i in 0..n {
        s += &format!(
            "  s = s + x{i} * x{};\n  s = s + sin(x{i}) * 0.5;\n",
            (i + 1) % n
        );
    }
    let args: Vec<String> = (0..n).map(|i| format!("{}.5", i % 7)).collect();
    s + &format!(
        "  return s;\n}}\ndouble main() {{ return f({}); }}\n",
        args.join(", ")
    )
}

fn wide_jacobian(n: usize) -> String {
    wide(n, "[jacobian(J)]")
}

fn wide_sparse_jacobian(n: usize) -> String {
    wide(n, "[jacobian(J, sparse)]")
}

fn wide_hessian(n: usize) -> String {
    wide(n, "[hessian(H)]")
}

fn wide_sparse_hessian(n: usize) -> String {
    wide(n, "[hessian(H, sparse)]")
}

/// An `else if` chain of `n` arms under `[hessian(H)]`.
fn hessian_chain(n: usize) -> String {
    let mut s = String::from(
        "[hessian(H)]\ndouble f(double x, double z, int k) {\n  double y = 0.0;\n  if (k == 0) { y = x * z; }\n",
    );
    for i in 1..n {
        s += &format!("  else if (k == {i}) {{ y = x * z * {i}.0 + sin(x); }}\n");
    }
    s + "  else { y = -x * z; }\n  return y;\n}\ndouble main() { return f(1.5, 0.5, 3); }\n"
}

/// Nested `if`s around one assignment.
fn nested_ifs(n: usize) -> String {
    format!(
        "double f(double x, double z) {{\n  double y = x;\n  {}y = y * z;{}\n  return y;\n}}\ndouble main() {{ return f(1.5, 0.5); }}\n",
        "if (y > 0.0) { ".repeat(n),
        " }".repeat(n)
    )
}

/// `n` locals declared in one block, then each read: name lookup (once a
/// linear scan of the block per use, quadratic).
fn locals(n: usize) -> String {
    let mut s = String::from("double f(double x) {\n");
    for i in 0..n {
        s += &format!("  double v{i} = x * {i}.0;\n");
    }
    s += "  double s = 0.0;\n";
    for i in 0..n {
        s += &format!("  s += v{i};\n");
    }
    s + "  return s;\n}\ndouble main() { return f(1.5); }\n"
}

/// `f` calls `f1`, which calls `f2`, ... up to `fn`, which squares; each
/// link's body is `link(next)`.
fn chain_of(n: usize, link: impl Fn(&str) -> String) -> String {
    let name = |i: usize| {
        if i == 0 {
            "f".to_string()
        } else {
            format!("f{i}")
        }
    };
    let mut s = String::new();
    for i in 0..n {
        s += &format!(
            "double {}(double x) {{ return {}; }}\n",
            name(i),
            link(&name(i + 1))
        );
    }
    s + &format!("double f{n}(double x) {{ return x * x; }}\ndouble main() {{ return f(1.5); }}\n")
}

/// Each function calls the next once.
fn call_chain(n: usize) -> String {
    chain_of(n, |g| format!("{g}(x) + 1.0"))
}

/// `call_chain`, but each function calls the next twice.
fn call_tree(n: usize) -> String {
    chain_of(n, |g| format!("{g}(x) + {g}(x * 0.5)"))
}

/// `n` small functions with a branch (not inlined past `inline`'s
/// budget), called one after the other by `f`.
fn many_calls(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s += &format!(
            "double h{i}(double x) {{ if (x > {i}.5) {{ return x * {}.0; }} return x + 1.0; }}\n",
            1 + i % 7
        );
    }
    s += "double f(double x) {\n  double y = x;\n";
    for i in 0..n {
        s += &format!("  y = h{i}(y) * 0.5;\n");
    }
    s + "  return y;\n}\ndouble main() { return f(1.5); }\n"
}

/// `g(g(...g(x)...))`, `n` calls deep, in one expression.
fn nested_calls(n: usize) -> String {
    format!(
        "double g(double x) {{ if (x > 1.0) {{ return x * 0.5; }} return x + 1.0; }}\n\
         double f(double x) {{ return {}x{}; }}\ndouble main() {{ return f(1.5); }}\n",
        "g(".repeat(n),
        ")".repeat(n)
    )
}

/// Milliseconds of frontend, derivative passes, opt and codegen.
fn compile(source: &str, grad: bool) -> [f64; 4] {
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let mut m =
        driver::frontend("bench.ad", source, &adc::CompileOptions::default()).expect("compiles");
    if grad {
        add_request(&mut m, "f", &Request::Grad).expect("request");
    }
    let front = ms(t);
    let t = Instant::now();
    adc_passes::ad::differentiate(&mut m, adc_passes::ad::AdStage::Transpose).expect("derivative");
    let ad = ms(t);
    let t = Instant::now();
    adc_passes::optimize(&mut m);
    let opt = ms(t);
    let t = Instant::now();
    let jit = adc_codegen::jit(&m, &|_| String::new(), &[]).expect("JIT");
    let codegen = ms(t);
    drop(jit);
    [front, ad, opt, codegen]
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "quick" && !a.starts_with('-'))
        .collect();
    type Gen = fn(usize) -> String;
    // The last field: also with `--grad` (not for the shapes that carry
    // their own derivative attribute and are measured for it).
    let shapes: &[(&str, Gen, &[usize], bool)] = &[
        ("ifs", ifs, &[1500, 3000, 6000], true),
        ("chain", chain, &[2500, 5000, 10000], true),
        ("straight", straight, &[5000, 10000, 20000], true),
        ("flat sum", flat_sum, &[25000, 50000, 100000], true),
        ("hessian sum", hessian_sum, &[5000, 10000, 20000], true),
        ("jacobian sum", jacobian_sum, &[2500, 5000, 10000], true),
        ("wide jacobian", wide_jacobian, &[250, 500, 1000], false),
        (
            "wide sparse jacobian",
            wide_sparse_jacobian,
            &[250, 500, 1000],
            false,
        ),
        ("wide hessian", wide_hessian, &[250, 500, 1000], false),
        (
            "wide sparse hessian",
            wide_sparse_hessian,
            &[250, 500, 1000],
            false,
        ),
        ("hessian chain", hessian_chain, &[1000, 2000, 4000], false),
        ("nested ifs", nested_ifs, &[1500, 3000, 6000], true),
        ("locals", locals, &[5000, 10000, 20000], true),
        ("call chain", call_chain, &[500, 1000, 2000], true),
        ("call tree", call_tree, &[250, 500, 1000], true),
        ("many calls", many_calls, &[500, 1000, 2000], true),
        ("nested calls", nested_calls, &[5000, 10000, 20000], true),
    ];
    println!("| shape | mode | n | frontend ms | ad ms | opt ms | codegen ms | total ms | ratio |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for &(name, gen, sizes, with_grad) in shapes {
        if !words.is_empty() && !words.iter().any(|w| name.contains(w.as_str())) {
            continue;
        }
        for grad in [false, true] {
            if grad && !with_grad {
                continue;
            }
            let mut prev: Option<f64> = None;
            let sizes = if quick { &sizes[..2] } else { sizes };
            for &n in sizes {
                let source = gen(n);
                let [front, ad, opt, codegen] = compile(&source, grad);
                let total = front + ad + opt + codegen;
                let ratio = prev.map_or("".to_string(), |p| format!("{:.2}", total / p));
                println!(
                    "| {name} | {} | {n} | {front:.0} | {ad:.0} | {opt:.0} | {codegen:.0} | {total:.0} | {ratio} |",
                    if grad { "grad" } else { "primal" }
                );
                prev = Some(total);
            }
        }
    }
}
