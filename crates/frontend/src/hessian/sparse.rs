//! `[hessian(NAME, ..., sparse)]` (docs/derivatives.md#sparse-hessians):
//! the sparse Jacobian of the gradient. [`super`] generates the
//! gradient wrapper `NAME__gw` as for a dense Hessian and puts
//! `[jacobian(NAME__gj, ..., sparse)]` on it ([`crate::jacobian`]'s sparse
//! expansion: dependency sweep, column coloring, compressed forward
//! evaluation). This module writes the two functions the user calls:
//!
//! - `NAME_nnz`: one sweep (`NAME__gj__deps`, growing its arena as
//!   `NAME__gj_nnz` does), counting the entries `(r, c)` with `c <= r`;
//! - `NAME`: the same sweep, then `NAME__gj__fill` into full-size rows,
//!   then the lower triangle's entries copied to `vals`, `cols`, `rows`.
//!
//! Both then call `F` for its result and writes, since `NAME__gw` writes
//! none of its arguments. All locals start with `adc_hs_`.

use crate::ast::*;
use crate::jacobian::type_name;
use std::fmt::Write;

/// `F`'s parameters as declared.
fn params(f: &FuncDecl) -> Vec<String> {
    f.params
        .iter()
        .map(|p| {
            let mode = match p.mode {
                Mode::Value => "",
                Mode::Inout => "inout ",
                Mode::Out => "out ",
            };
            let arr = if p.is_array { "[]" } else { "" };
            format!("{mode}{}{arr} {}", type_name(p.ty), p.name.name)
        })
        .collect()
}

/// The sweep of `NAME__gw`'s gradient rows over its columns, again with
/// twice the room until the sets fit; `body` then runs with row `r`'s set
/// at `adc_hs_arena[adc_hs_heads[r]]` (its size, then its sorted columns;
/// a head of 0 is the empty set).
fn sweep(name: &str, gw_args: &str, body: &str) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "    int adc_hs_heads[adc_hs_n];");
    let _ = writeln!(t, "    double adc_hs_g[adc_hs_n];");
    let _ = writeln!(t, "    int adc_hs_cap = 64 + 18 * adc_hs_n;");
    let _ = writeln!(t, "    bool adc_hs_done = false;");
    let _ = writeln!(t, "    while (!adc_hs_done) {{");
    let _ = writeln!(t, "        int adc_hs_arena[adc_hs_cap];");
    let _ = writeln!(
        t,
        "        if ({name}__gj__deps({gw_args}adc_hs_g, adc_hs_arena, adc_hs_heads)) {{"
    );
    let _ = writeln!(t, "            adc_hs_done = true;");
    t += body;
    let _ = writeln!(t, "        }} else {{");
    let _ = writeln!(t, "            adc_hs_cap = 2 * adc_hs_cap;");
    let _ = writeln!(t, "        }}");
    let _ = writeln!(t, "    }}");
    t
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
    let _ = writeln!(s, "    int adc_hs_nnz = 0;");
    s += &sweep(
        name,
        &gw_args,
        "            for (int adc_hs_r = 0; adc_hs_r < adc_hs_n; adc_hs_r++) {
                int adc_hs_h = adc_hs_heads[adc_hs_r];
                if (adc_hs_h != 0) {
                    for (int adc_hs_k = 1; adc_hs_k <= adc_hs_arena[adc_hs_h]; adc_hs_k++) {
                        if (adc_hs_arena[adc_hs_h + adc_hs_k] <= adc_hs_r) { adc_hs_nnz += 1; }
                    }
                }
            }
",
    );
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
    let body = format!(
        "            int adc_hs_m = 0;
            for (int adc_hs_r = 0; adc_hs_r < adc_hs_n; adc_hs_r++) {{
                if (adc_hs_heads[adc_hs_r] != 0) {{ adc_hs_m += adc_hs_arena[adc_hs_heads[adc_hs_r]]; }}
            }}
            double adc_hs_v[adc_hs_m];
            int adc_hs_c[adc_hs_m];
            int adc_hs_p[adc_hs_n + 1];
            {name}__gj__fill({gw_args}adc_hs_g, adc_hs_v, adc_hs_c, adc_hs_p, adc_hs_arena, adc_hs_heads);
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
    s += &sweep(name, &gw_args, &body);
    let _ = writeln!(s, "    return {call_f};");
    let _ = writeln!(s, "}}");
    s
}
