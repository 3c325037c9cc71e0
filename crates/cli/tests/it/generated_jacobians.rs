//! `--jacobian` and `--hessian` of functions an attribute generates (a
//! reverse derivative, a `[jacobian]` function), which the source does not
//! define: the matrices checked against central differences of the same
//! functions written here in Rust; a generated function returning a tuple
//! is refused as a user function is (exit 2).

use crate::common::{run_entry, scratch, stderr, stdout};

const SRC: &str = "[autodiff_reverse(rg, Active, ActiveOnly)]
[autodiff_forward(tg, Dual, Dual)]
double g(double x) { return x * x * sin(x); }
[jacobian(J)]
double h(double[] x) { return x[0] * x[0] * x[1] + sin(x[0] * x[1]); }
";

/// `rg(x, seed)`: `seed * g'(x)`, by hand.
fn rg(v: &[f64]) -> Vec<f64> {
    let (x, seed) = (v[0], v[1]);
    vec![seed * (2.0 * x * x.sin() + x * x * x.cos())]
}

/// `J(x, jac)`: `h(x)`, then `jac` = the gradient of `h`, by hand.
fn j(x: &[f64]) -> Vec<f64> {
    let p = x[0] * x[1];
    vec![
        x[0] * x[0] * x[1] + p.sin(),
        2.0 * x[0] * x[1] + x[1] * p.cos(),
        x[0] * x[0] + x[0] * p.cos(),
    ]
}

/// The Jacobian of `f` at `x` by central differences.
fn central(f: fn(&[f64]) -> Vec<f64>, x: &[f64]) -> Vec<Vec<f64>> {
    let h = 1e-6;
    let rows = f(x).len();
    let mut jac = vec![vec![0.0; x.len()]; rows];
    for c in 0..x.len() {
        let (mut up, mut down) = (x.to_vec(), x.to_vec());
        up[c] += h;
        down[c] -= h;
        let (fu, fd) = (f(&up), f(&down));
        for r in 0..rows {
            jac[r][c] = (fu[r] - fd[r]) / (2.0 * h);
        }
    }
    jac
}

/// The Hessian of the first output of `f` at `x` by central second
/// differences.
fn central2(f: fn(&[f64]) -> Vec<f64>, x: &[f64]) -> Vec<Vec<f64>> {
    let h = 1e-4;
    let at = |di: usize, si: f64, dj: usize, sj: f64| {
        let mut y = x.to_vec();
        y[di] += si * h;
        y[dj] += sj * h;
        f(&y)[0]
    };
    let n = x.len();
    let mut hess = vec![vec![0.0; n]; n];
    for i in 0..n {
        for k in 0..n {
            hess[i][k] = (at(i, 1.0, k, 1.0) - at(i, 1.0, k, -1.0) - at(i, -1.0, k, 1.0)
                + at(i, -1.0, k, -1.0))
                / (4.0 * h * h);
        }
    }
    hess
}

/// `adc run --entry ENTRY --args ARGS FLAG --json`'s matrix under `key`.
fn matrix(entry: &str, args: &str, flag: &str, key: &str) -> Vec<Vec<f64>> {
    let p = scratch(&format!("generated_{entry}.ad"), SRC);
    let o = run_entry(&p, entry, args, &[flag, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{entry} {flag}: {}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("one JSON object");
    let rows = v[key].as_array().expect("rows");
    rows.iter()
        .map(|r| {
            r.as_array()
                .expect("a row")
                .iter()
                .map(|x| x.as_f64().expect("a number"))
                .collect()
        })
        .collect()
}

fn assert_close(got: &[Vec<f64>], want: &[Vec<f64>], tol: f64, what: &str) {
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: rows of {got:?} and {want:?}"
    );
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.len(), w.len(), "{what}: {got:?} and {want:?}");
        for (a, b) in g.iter().zip(w) {
            assert!(
                (a - b).abs() <= tol * (1.0 + b.abs()),
                "{what}: {got:?}, want {want:?}"
            );
        }
    }
}

/// A generated reverse derivative: its Jacobian (a row for its float
/// result, columns `x` and `seed`) and its Hessian.
#[test]
fn jacobian_and_hessian_of_a_reverse_derivative() {
    let at = [0.7, 1.3];
    let got = matrix("rg", "[0.7, 1.3]", "--jacobian", "jacobian");
    assert_close(&got, &central(rg, &at), 1e-6, "rg --jacobian");
    let got = matrix("rg", "[0.7, 1.3]", "--hessian", "hessian");
    assert_close(&got, &central2(rg, &at), 1e-5, "rg --hessian");
}

/// A generated `[jacobian]` function: the Jacobian of `J(x, jac)` has a
/// row for its result `h(x)` and one per element of `jac` (the gradient
/// of `h`), a column per element of `x`; its Hessian is `h`'s.
#[test]
fn jacobian_and_hessian_of_a_generated_jacobian() {
    let at = [0.4, -1.1];
    let got = matrix("J", "[[0.4, -1.1], [0, 0]]", "--jacobian", "jacobian");
    assert_close(&got, &central(j, &at), 1e-6, "J --jacobian");
    let got = matrix("J", "[[0.4, -1.1], [0, 0]]", "--hessian", "hessian");
    assert_close(&got, &central2(j, &at), 1e-5, "J --hessian");
}

/// A generated forward derivative returning `(primal, tangent)` is
/// refused as a user function returning a tuple is: exit 2 and a message.
#[test]
fn jacobian_of_a_generated_tuple_is_refused() {
    let p = scratch("generated_tuple.ad", SRC);
    let o = run_entry(&p, "tg", "[0.5, 1]", &["--jacobian"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("`jacobian` on `tg`, which returns a tuple, is not supported yet"),
        "{}",
        stderr(&o)
    );
}
