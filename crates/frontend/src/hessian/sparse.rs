//! `[hessian(NAME, ..., sparse)]` (docs/jacobians.md#sparse-hessians):
//! the sparse Jacobian of the gradient. [`super`] generates the
//! gradient wrapper `NAME__gw` as for a dense Hessian and puts
//! `[jacobian(NAME__gj, ..., sparse)]` on it ([`crate::jacobian`]'s sparse
//! expansion: dependency sweep, column coloring, compressed forward
//! evaluation). This module writes the two functions the user calls,
//! from that expansion's pieces (its sweep loop and row counting, and
//! `NAME__gj__deps` and `NAME__gj__fill`), running the sweep once:
//!
//! - `NAME_nnz`: the sweep, counting the entries `(r, c)` with `c <= r`;
//! - `NAME`: the sweep, then the sparse Jacobian of the gradient (both
//!   triangles) into scratch rows by `NAME__gj__fill` (coloring and
//!   compressed evaluation), and the lower triangle's entries copied to
//!   `vals`, `cols`, `rows`.
//!
//! Both then call `F` for its result and writes, since `NAME__gw` writes
//! none of its arguments. All locals start with `adc_hs_` (or `adc_s_`,
//! the sweep's).

use crate::ast::*;
use crate::jacobian::layout::param_decls as params;
use crate::jacobian::{sparse, type_name};
use std::fmt::Write;

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
    let gj = format!("{name}__gj");
    // `NAME__gw` writes none of its arguments: nothing to save and restore.
    let sweep = |body: &str| {
        let args = format!("{gw_args}adc_hs_g");
        sparse::sweep(&gj, &args, "adc_hs_n", "adc_hs_n", ("", ""), body)
    };
    let head = format!("    int adc_hs_n = {ncols};\n    double adc_hs_g[adc_hs_n];\n");
    let mut s = String::new();
    // NAME_nnz: the sweep, counting the lower triangle.
    let _ = writeln!(s, "{stat}int {name}_nnz({}) {{", ps.join(", "));
    s += &head;
    s += "    int adc_s_nnz = 0;\n";
    s += &sweep(&sparse::count(&gj, "adc_hs_n", true, None));
    let _ = writeln!(s, "    {call_f};");
    let _ = writeln!(s, "    return adc_s_nnz;");
    let _ = writeln!(s, "}}");
    // NAME: the sweep, both triangles into scratch rows by `NAME__gj__fill`
    // (counted first, with stamps of their own), the lower one copied.
    let mut decl = ps.clone();
    decl.extend([
        "out double[] vals".to_string(),
        "out int[] cols".into(),
        "out int[] rows".into(),
    ]);
    let _ = writeln!(s, "{stat}{} {name}({}) {{", type_name(rt), decl.join(", "));
    s += &head;
    // Short arrays: the runtime error `hessian needs N entries`.
    let len = crate::lower::SPARSE_HESSIAN_LEN;
    let mut body = "            int adc_s_nnz = 0;\n".to_string();
    body += &sparse::count(&gj, "adc_hs_n", false, Some("adc_s_nr"));
    let _ = write!(
        body,
        "            double adc_hs_v[adc_s_nnz];
            int adc_hs_c[adc_s_nnz];
            int adc_hs_p[adc_hs_n + 1];
            {gj}__fill({gw_args}adc_hs_g, adc_hs_v, adc_hs_c, adc_hs_p, adc_s_arena, adc_s_heads);
            int adc_hs_lower = 0;
            for (int adc_hs_r = 0; adc_hs_r < adc_hs_n; adc_hs_r++) {{
                for (int adc_hs_k = adc_hs_p[adc_hs_r]; adc_hs_k < adc_hs_p[adc_hs_r + 1]; adc_hs_k++) {{
                    if (adc_hs_c[adc_hs_k] <= adc_hs_r) {{ adc_hs_lower += 1; }}
                }}
            }}
            {len}(adc_hs_lower, vals);
            {len}(adc_hs_lower, cols);
            {len}(adc_hs_n + 1, rows);
            int adc_hs_q = 0;
            for (int adc_hs_r = 0; adc_hs_r < adc_hs_n; adc_hs_r++) {{
                rows[adc_hs_r] = adc_hs_q;
                for (int adc_hs_k = adc_hs_p[adc_hs_r]; adc_hs_k < adc_hs_p[adc_hs_r + 1]; adc_hs_k++) {{
                    if (adc_hs_c[adc_hs_k] <= adc_hs_r) {{
                        vals[adc_hs_q] = adc_hs_v[adc_hs_k];
                        cols[adc_hs_q] = adc_hs_c[adc_hs_k];
                        adc_hs_q += 1;
                    }}
                }}
            }}
            rows[adc_hs_n] = adc_hs_q;
"
    );
    s += &sweep(&body);
    let _ = writeln!(s, "    return {call_f};");
    let _ = writeln!(s, "}}");
    s
}
