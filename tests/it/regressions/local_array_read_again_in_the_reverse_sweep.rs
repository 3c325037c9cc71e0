use crate::support::{assert_close, d, floats, jit};
use adc::{ArgValue, ArrayValue};

/// A local array the reverse sweep reads again instead of taping (`unzip`'s
/// frozen locals) must hold, when read, what the forward sweep read: in `f`
/// nothing writes `e` after the read, so it is loaded again (and freed only
/// when the derivative returns); in `g` and `h` a later write (a store, a
/// callee's `inout` parameter) reaches the read around the outer loop, so
/// its values are taped. s = 3 sum exp(x_i) x_i in `g` and `h`.
#[test]
fn local_array_read_again_in_the_reverse_sweep() {
    // One body, three endings of the outer loop: none, a store, a callee.
    let program = |name: &str, outer: u32, write: &str| {
        format!(
            "[autodiff_reverse(d{name}, Duplicated, ActiveOnly)]
double {name}(double[] x) {{
    int n = len(x);
    double e[n];
    for (int i = 0; i < n; i++) e[i] = exp(x[i]);
    double s = 0.0;
    for (int r = 0; r < {outer}; r++) {{
        for (int i = 0; i < n; i++) s += e[i] * x[i];
        {write}
    }}
    return s;
}}
"
        )
    };
    let j = jit(&format!(
        "static void twice(inout double[] v) {{ for (int i = 0; i < len(v); i++) v[i] = 2.0 * v[i]; }}\n{}{}{}",
        program("f", 1, ""),
        program("g", 2, "for (int i = 0; i < n; i++) e[i] = 2.0 * e[i];"),
        program("h", 2, "twice(e);"),
    ));
    let x = [0.5, -1.25, 2.0];
    for (name, k) in [("df", 1.0), ("dg", 3.0), ("dh", 3.0)] {
        let mut args = [
            ArgValue::Array(ArrayValue::F64(x.to_vec())),
            ArgValue::Array(ArrayValue::F64(vec![0.0; 3])),
            d(1.0),
        ];
        floats(&j, name, &mut args);
        let ArgValue::Array(ArrayValue::F64(dx)) = &args[1] else {
            panic!("shadow")
        };
        for (i, xi) in x.iter().enumerate() {
            let want = k * xi.exp() * (1.0 + xi);
            assert_close(dx[i], want, 1e-14, &format!("{name} d/dx{i}"));
        }
    }
}
