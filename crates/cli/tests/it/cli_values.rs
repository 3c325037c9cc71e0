//! What `adc run` reads and prints for values: `--args` numbers read
//! exactly, a tuple's tangent with one entry per element (docs/cli.md).

use crate::common::{adc, run_entry, scratch, stderr, stdout};

/// `--args` numbers are read to the nearest double, as literals are: the
/// JSON reader's default (fast, not correctly rounded) parse gave the
/// neighbouring double for one number in five (-114.67239885378615 came
/// back as ...616), from an independent conformance run.
#[test]
fn args_are_read_exactly() {
    let p = scratch(
        "args_exact.ad",
        "double first(double[] xs) { return xs[0]; }\n",
    );
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut xs = Vec::new();
    while xs.len() < 2000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let x = f64::from_bits(state >> 1);
        // Ordinary magnitudes (where the fast parse went wrong) and any.
        let x = if xs.len() % 2 == 0 {
            (x.fract() - 0.5) * 1e3
        } else {
            x
        };
        if x.is_finite() {
            xs.push(x);
        }
    }
    let text: Vec<String> = xs.iter().map(|x| format!("{x:?}")).collect();
    let args = format!("[[{}]]", text.join(", "));
    let o = adc(&[
        "run",
        p.to_str().unwrap(),
        "--entry",
        "first",
        "--args",
        &args,
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let inner = out
        .split("\"args\": [[")
        .nth(1)
        .and_then(|r| r.split("]]").next())
        .expect("the array argument in the JSON output");
    let back: Vec<f64> = inner
        .split(", ")
        .map(|t| t.parse().expect("a number"))
        .collect();
    assert_eq!(back.len(), xs.len());
    for (x, b) in xs.iter().zip(&back) {
        assert_eq!(x.to_bits(), b.to_bits(), "{x:?} read as {b:?}");
    }
}

/// A tuple's tangent has one entry per element, `null` for the `int` and
/// `bool` ones (the float elements' tangents alone were printed).
#[test]
fn tangent_of_a_tuple_has_an_entry_per_element() {
    let p = scratch(
        "tuple_tangent.ad",
        "(double, int, double, bool) t(double x) { return (x * x, 3, 2.0 * x, true); }\n(int, bool) u(double x) { return (int(x), x > 0.0); }\n",
    );
    let run = |entry: &str| {
        let o = adc(&[
            "run",
            p.to_str().unwrap(),
            "--entry",
            entry,
            "--args",
            "[3.0]",
            "--tangent",
            "[1.0]",
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o).trim().to_string()
    };
    assert_eq!(
        run("t"),
        r#"{"result": [9.0, 3, 6.0, true], "args": [3.0], "tangent": [6.0, null, 2.0, null]}"#
    );
    assert_eq!(
        run("u"),
        r#"{"result": [3, true], "args": [3.0], "tangent": [null, null]}"#
    );
}

/// A shadow of the wrong length passed to a generated derivative is a
/// runtime error at the call (it named the attribute).
#[test]
fn shadow_length_errors_name_the_call() {
    let p = scratch(
        "shadow_len.ad",
        "[autodiff_reverse(dg, Duplicated, ActiveOnly)]
double g(double[] v) { return v[0] * v[1]; }
double m() {
    double v[2] = {1.0, 2.0}; double d[3];
    dg(v, d, 1.0);
    return d[0];
}
",
    );
    let o = adc(&["run", p.to_str().unwrap(), "--entry", "m"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("shadow length differs"), "{err}");
    assert!(err.trim_end().ends_with("shadow_len.ad:5:5"), "{err}");
}

/// A `jac` of another length than rows times columns is the Jacobian's
/// length error (exit 3), not an index out of bounds, too long or too short.
#[test]
fn jacobian_length_errors_name_both_lengths() {
    let p = scratch(
        "jac_len.ad",
        "[jacobian(jp)]
void p(double r, double t, out double[] xy) {
    xy[0] = r * cos(t);
    xy[1] = r * sin(t);
}
",
    );
    for (jac, code, len) in [
        ("[0, 0, 0, 0]", 0, 4),
        ("[0, 0, 0]", 3, 3),
        ("[0, 0, 0, 0, 0]", 3, 5),
    ] {
        let args = format!("[2, 0, [0, 0], {jac}]");
        let o = adc(&["run", p.to_str().unwrap(), "--entry", "jp", "--args", &args]);
        assert_eq!(o.status.code(), Some(code), "{jac}: {}", stderr(&o));
        if code == 3 {
            let err = stderr(&o);
            assert!(
                err.contains(&format!(
                    "runtime error: len(jac) = {len} differs from nrows * ncols = 4 at "
                )) && err.trim_end().ends_with("jac_len.ad:1:1"),
                "{err}"
            );
        }
    }
}

/// `--jacobian` prints one list per row even when there are no columns: a
/// float result of integer parameters is one row of nothing, `[[]]`.
#[test]
fn jacobian_rows_without_columns_stay_rows() {
    let p = scratch(
        "jac_no_cols.ad",
        "double twice(int n) { return 2.0 * n; }\n",
    );
    let o = run_entry(&p, "twice", "[3]", &["--jacobian", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("\"jacobian\": [[]]"), "{}", stdout(&o));
    let o = run_entry(&p, "twice", "[3]", &["--jacobian"]);
    assert!(stdout(&o).contains("jacobian: [[]]"), "{}", stdout(&o));
}

/// A parameter named like one a Jacobian or Hessian adds (`jac`, `hess`,
/// `vals`, ...) is accepted: the added one is renamed (`jac_`), under
/// `--jacobian` and `--hessian` too, and the header declares that name.
#[test]
fn jacobian_parameters_named_like_the_added_ones() {
    let p = scratch(
        "jac_names.ad",
        "double f(double jac, double hess) { return jac * hess * hess; }
[jacobian(J)]
double g(double x, out double[] jac) { jac[0] = x; return x; }
[hessian(H, sparse)]
double h(double[] vals, double rows) { return vals[0] * vals[1] * rows; }
",
    );
    for (flag, want) in [
        ("--jacobian", "\"jacobian\": [[9.0, 12.0]]"),
        ("--hessian", "\"hessian\": [[0.0, 6.0], [6.0, 4.0]]"),
    ] {
        let o = run_entry(&p, "f", "[2, 3]", &[flag, "--json"]);
        assert_eq!(o.status.code(), Some(0), "{flag}: {}", stderr(&o));
        assert!(stdout(&o).contains(want), "{flag}: {}", stdout(&o));
    }
    let (obj, h) = (p.with_extension("o"), p.with_extension("h"));
    let o = crate::common::compile(&p, &obj, Some(&h));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let header = std::fs::read_to_string(&h).expect("a header");
    for decl in [
        "double J(double x, double *jac, int64_t jac_len, double *jac_, int64_t jac__len);",
        "double H(const double *vals, int64_t vals_len, double rows, double *vals_, int64_t vals__len, int64_t *cols, int64_t cols_len, int64_t *rows_, int64_t rows__len);",
    ] {
        assert!(header.contains(decl), "{decl} in\n{header}");
    }
}
