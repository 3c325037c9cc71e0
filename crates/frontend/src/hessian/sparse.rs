//! `[hessian(NAME, ..., sparse)]` (docs/jacobians.md#sparse-hessians):
//! the sparse Jacobian of the gradient. [`super`] generates the
//! gradient wrapper `NAME__gw` as for a dense Hessian and puts
//! `[jacobian(NAME__gj, ..., sparse)]` on it ([`crate::jacobian`]'s sparse
//! expansion: dependency sweep, column coloring, compressed forward
//! evaluation). This module writes the two functions the user calls:
//!
//! - `NAME`: `NAME__gj_nnz` and `NAME__gj` (the sparse Jacobian of the
//!   gradient, both triangles), then the lower triangle's entries copied
//!   to `vals`, `cols`, `rows`;
//! - `NAME_nnz`: the same, counting the entries `(r, c)` with `c <= r`
//!   (so it runs the compressed evaluation too, not only the sweep).
//!
//! Both then call `F` for its result and writes, since `NAME__gw` writes
//! none of its arguments. All locals start with `adc_hs_`.

use crate::ast::*;
use crate::jacobian::layout::param_decls as params;
use crate::jacobian::type_name;
use std::fmt::Write;

/// The statements that fill `adc_hs_v`, `adc_hs_c` and `adc_hs_p` with
/// the sparse Jacobian of `NAME__gw` (both triangles), through the
/// functions [`crate::jacobian`] generates for it: `NAME__gj_nnz` for the
/// number of entries, then `NAME__gj`. They read no set representation,
/// which is the sparse Jacobian's own business.
fn full(name: &str, gw_args: &str) -> String {
    format!(
        "    double adc_hs_g[adc_hs_n];
    int adc_hs_m = {name}__gj_nnz({gw_args}adc_hs_g);
    double adc_hs_v[adc_hs_m];
    int adc_hs_c[adc_hs_m];
    int adc_hs_p[adc_hs_n + 1];
    {name}__gj({gw_args}adc_hs_g, adc_hs_v, adc_hs_c, adc_hs_p);
"
    )
}

/// The `.ad` text of `NAME_nnz` and `NAME`; `ncols` counts the columns.
pub(super) fn source(f: &FuncDecl, name: &str, ncols: &str) -> String {
    let ReturnType::Base(rt) = f.ret else {
        unreachable!("`hessian::request` refuses results other than float ones")
    };
    let stat = if f.is_static { "static " } else { "" };
    let ps = params(f);
    let (_, gw) = super::gw_params(f);
    let gw_args: String = gw.iter().map(|a| format!("{a}, ")).collect();
    let all: Vec<&str> = f.params.iter().map(|p| p.name.name.as_str()).collect();
    let call_f = format!("{}({})", f.name.name, all.join(", "));
    let mut s = String::new();
    // NAME_nnz
    let _ = writeln!(s, "{stat}int {name}_nnz({}) {{", ps.join(", "));
    let _ = writeln!(s, "    int adc_hs_n = {ncols};");
    s += &full(name, &gw_args);
    s += "    int adc_hs_nnz = 0;
    for (int adc_hs_r = 0; adc_hs_r < adc_hs_n; adc_hs_r++) {
        for (int adc_hs_k = adc_hs_p[adc_hs_r]; adc_hs_k < adc_hs_p[adc_hs_r + 1]; adc_hs_k++) {
            if (adc_hs_c[adc_hs_k] <= adc_hs_r) { adc_hs_nnz += 1; }
        }
    }
";
    let _ = writeln!(s, "    {call_f};");
    let _ = writeln!(s, "    return adc_hs_nnz;");
    let _ = writeln!(s, "}}");
    // NAME
    let mut decl = ps.clone();
    decl.extend([
        "out double[] vals".to_string(),
        "out int[] cols".into(),
        "out int[] rows".into(),
    ]);
    let _ = writeln!(s, "{stat}{} {name}({}) {{", type_name(rt), decl.join(", "));
    let _ = writeln!(s, "    int adc_hs_n = {ncols};");
    s += &full(name, &gw_args);
    s += "    int adc_hs_q = 0;
    for (int adc_hs_r = 0; adc_hs_r < adc_hs_n; adc_hs_r++) {
        rows[adc_hs_r] = adc_hs_q;
        for (int adc_hs_k = adc_hs_p[adc_hs_r]; adc_hs_k < adc_hs_p[adc_hs_r + 1]; adc_hs_k++) {
            if (adc_hs_c[adc_hs_k] <= adc_hs_r) {
                vals[adc_hs_q] = adc_hs_v[adc_hs_k];
                cols[adc_hs_q] = adc_hs_c[adc_hs_k];
                adc_hs_q += 1;
            }
        }
    }
    rows[adc_hs_n] = adc_hs_q;
";
    let _ = writeln!(s, "    return {call_f};");
    let _ = writeln!(s, "}}");
    s
}
