//! `[jacobian(NAME, sparse)]` (docs/jacobians.md#sparse-jacobians) as
//! source, in three steps:
//!
//! 1. The pattern: `NAME__pattern`, the dependency sweep of `F` (a forward
//!    derivative whose tangents are index sets, `ad::sets`, asked for with
//!    the internal option `__adc_sets`), run by `NAME__deps` with one
//!    singleton set per column and an arena that grows (the sweep runs
//!    again when it did not fit, with twice the room it asked for).
//! 2. The coloring: greedy distance-2 coloring of the columns in natural
//!    order (Gebremedhin, Manne and Pothen, "What color is your
//!    Jacobian?", SIAM Review 47(4), 2005): two columns that share a row
//!    get different colors; or, when it takes no more runs than any
//!    coloring could, column `c` gets `c mod K`, `K` the widest span of a
//!    row (banded patterns, in linear time).
//! 3. The compressed evaluation: `NAME__columns`, a vector forward
//!    derivative of width [`CHUNK`], run once per [`CHUNK`] colors, each
//!    lane seeded with the sum of one color's columns; an entry `(r, c)`
//!    is lane `color(c)` of row `r`, since no other column of that color
//!    reaches row `r`. Decompression writes it to its place in the rows.
//!
//! `NAME_nnz` runs step 1 only. All locals start with `adc_s_`.

use super::layout::{layout, len, param_decls as params, save_restore, sparse_names, Layout};
use super::sparse_helpers::lane_suffix;
use super::sparse_rows::{self, Force};
use super::{is_float, type_name};
use crate::ast::*;
use std::fmt::Write;

/// Colors per run of the compressed evaluation.
pub const CHUNK: u32 = 4;

/// The lanes of a sparse Hessian's narrow compressed evaluation
/// (`NAME__compressed3`; 3 colors: a tridiagonal Hessian; 6).
pub const NARROW: u32 = 3;

/// The lanes of a sparse Hessian's wide compressed evaluation
/// (`NAME__compressed5`; 5 colors: a pentadiagonal Hessian in one run,
/// not two).
pub const WIDE: u32 = 5;

/// The lanes of a sparse Hessian's compressed evaluations, narrowest
/// first: a run of `k` colors takes the one with the fewest runs, of
/// those the narrowest ([`by_width`]).
pub const HESSIAN_WIDTHS: [u32; 3] = [NARROW, CHUNK, WIDE];

/// `.ad` code running `call(w)` for the width `w` of [`HESSIAN_WIDTHS`]
/// with the fewest runs of `k` colors, of those the narrowest.
pub fn by_width(k: &str, call: impl Fn(u32) -> String) -> String {
    let [a, b, c] = HESSIAN_WIDTHS;
    let runs = |w: u32| format!("({k} + {w} - 1) / {w}");
    let (ra, rb, rc) = (runs(a), runs(b), runs(c));
    format!(
        "if ({ra} <= {rb} && {ra} <= {rc}) {{ {} }}
        else if ({rb} <= {rc}) {{ {} }}
        else {{ {} }}",
        call(a),
        call(b),
        call(c)
    )
}

fn ret_type(f: &FuncDecl) -> String {
    match &f.ret {
        ReturnType::Void => "void".to_string(),
        ReturnType::Base(t) => type_name(*t).to_string(),
        ReturnType::Tuple(_) => unreachable!("tuples are refused by `request`"),
    }
}

fn names(f: &FuncDecl) -> String {
    f.params
        .iter()
        .map(|p| p.name.name.clone())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The attributes `F` gets, and the `.ad` text of `NAME`, `NAME_nnz` and
/// their helpers; `NAME` is emitted as the `static` function `entry`
/// when given (element Jacobians, `elements_source`, fall back to it).
pub(super) fn source(
    f: &FuncDecl,
    name: &str,
    dual: &[bool],
    entry: Option<&str>,
    force: Force,
) -> String {
    let float_ret = matches!(f.ret, ReturnType::Base(t) if is_float(t));
    let l = layout(f, dual, float_ret);
    let single = super::request::has_single_float(f, dual);
    let stat = if f.is_static { "static " } else { "" };
    let ps = params(f);
    let args = names(f);
    let ret = ret_type(f);
    let has_ret = ret != "void";
    let (save, restore) = save_restore(f);
    let mut s = String::new();
    if force == Force::Colors {
        for w in HESSIAN_WIDTHS {
            s += &compressed(f, name, dual, &l, (false, w));
        }
        s += &super::sparse_helpers::helpers(name, CHUNK, single);
        return s;
    }
    s += &deps(f, name, dual, &l);
    let sweep = |body: &str| sweep(name, &args, &l.nrows, &l.ncols, (&save, &restore), body);
    // NAME_nnz
    let _ = writeln!(s, "{stat}int {name}_nnz({}) {{", ps.join(", "));
    let _ = writeln!(s, "    int adc_s_nnz = 0;");
    s += &sweep(&count(name, &l.ncols, false, None));
    // The sweep writes no `out` array (`ad::sets`' unread outputs): `F`
    // does, from the arguments as they came.
    if f.params.iter().any(|p| p.mode == Mode::Out && p.is_array) {
        s += &restore;
        let _ = writeln!(s, "    {}({args});", f.name.name);
    }
    let _ = writeln!(s, "    return adc_s_nnz;");
    let _ = writeln!(s, "}}");
    // NAME
    let [vals, cols, rows] = sparse_names(f);
    let mut all = ps.clone();
    all.extend([
        format!("out double[] {vals}"),
        format!("out int[] {cols}"),
        format!("out int[] {rows}"),
    ]);
    let (stat_entry, entry) = match entry {
        Some(e) => ("static ", e),
        None => (stat, name),
    };
    let _ = writeln!(s, "{stat_entry}{ret} {entry}({}) {{", all.join(", "));
    let zero = match f.ret {
        ReturnType::Base(BaseType::Bool) => "false",
        ReturnType::Base(BaseType::Int) => "0",
        _ => "0.0",
    };
    if has_ret {
        let _ = writeln!(s, "    {ret} adc_s_ret = {zero};");
    }
    let sep = if args.is_empty() { "" } else { ", " };
    let call = format!("{name}__fill({args}{sep}{vals}, {cols}, {rows}, adc_s_arena, adc_s_heads)");
    let body = if has_ret {
        format!("{restore}            adc_s_ret = {call};\n")
    } else {
        format!("{restore}            {call};\n")
    };
    s += &sweep(&body);
    if has_ret {
        let _ = writeln!(s, "    return adc_s_ret;");
    }
    let _ = writeln!(s, "}}");
    s += &fill(f, name, &l, force);
    // By rows only, there is no forward derivative to run.
    if force != Force::Rows {
        s += &compressed(f, name, dual, &l, (true, CHUNK));
    }
    s += &super::sparse_helpers::helpers(name, CHUNK, single);
    if force != Force::Columns {
        s += &sparse_rows::byrows(f, name, dual, &l);
        s += &sparse_rows::helpers(name);
    }
    s
}

/// The sweep of `NAME__deps` (called with `args`, `F`'s arguments), run
/// again with twice the room asked for until the sets fit; `body` then
/// runs with the pattern in `adc_s_arena` and `adc_s_heads` (`adc_s_nr`
/// rows). `save_restore`: declarations saving `F`'s `inout` arguments
/// and statements restoring them before each run.
pub(crate) fn sweep(
    name: &str,
    args: &str,
    nrows: &str,
    ncols: &str,
    (save, restore): (&str, &str),
    body: &str,
) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "    int adc_s_nr = {nrows};");
    let _ = writeln!(t, "    int adc_s_heads[__adc_uninit(adc_s_nr)];");
    let _ = writeln!(t, "    int adc_s_cap = 64 + 4 * ({ncols} + adc_s_nr);");
    t += save;
    let _ = writeln!(t, "    bool adc_s_done = false;");
    let _ = writeln!(t, "    while (!adc_s_done) {{");
    t += restore;
    let _ = writeln!(t, "        int adc_s_arena[__adc_uninit(adc_s_cap)];");
    let sep = if args.is_empty() { "" } else { ", " };
    let _ = writeln!(
        t,
        "        if ({name}__deps({args}{sep}adc_s_arena, adc_s_heads)) {{"
    );
    let _ = writeln!(t, "            adc_s_done = true;");
    t += body;
    let _ = writeln!(t, "        }} else {{");
    let _ = writeln!(
        t,
        "            adc_s_cap = 2 * (adc_s_arena[0] > adc_s_cap ? adc_s_arena[0] : adc_s_cap);"
    );
    let _ = writeln!(t, "        }}");
    let _ = writeln!(t, "    }}");
    t
}

/// Statements, in the body of [`sweep`], adding to `adc_s_nnz` the
/// number of entries of the rows (of those `(r, c)` with `c <= r` when
/// `lower`); `nc` counts the columns. Union nodes (`ad::sets`) are
/// flattened into a scratch row by `NAME__lazy` with the stamps
/// `stamp0 + r + 1` (`r + 1` without `stamp0`): a later flattening of the same sets must use other
/// stamps (the nodes it visits are marked with them).
pub(crate) fn count(name: &str, nc: &str, lower: bool, stamp0: Option<&str>) -> String {
    let (one, set, lazy) = if lower {
        (
            "if (-1 - adc_s_h <= adc_s_r) { adc_s_nnz++; }",
            "for (int adc_s_k = 1; adc_s_k <= adc_s_n; adc_s_k++) { if (adc_s_arena[adc_s_h + adc_s_k] <= adc_s_r) { adc_s_nnz++; } }",
            "int adc_s_q = {name}__lazy(adc_s_h, {stamp0} + adc_s_r + 1, adc_s_arena, adc_s_seen, adc_s_stack, adc_s_buf, 0);
                        for (int adc_s_k = 0; adc_s_k < adc_s_q; adc_s_k++) { if (adc_s_buf[adc_s_k] <= adc_s_r) { adc_s_nnz++; } }",
        )
    } else {
        (
            "adc_s_nnz++;",
            "adc_s_nnz += adc_s_n;",
            "adc_s_nnz += {name}__lazy(adc_s_h, {stamp0} + adc_s_r + 1, adc_s_arena, adc_s_seen, adc_s_stack, adc_s_buf, 0);",
        )
    };
    let stamp0 = stamp0.map(|s| format!("{s} + ")).unwrap_or_default();
    let lazy = lazy.replace("{name}", name).replace("{stamp0} + ", &stamp0);
    format!(
        "            int adc_s_nc = {nc};
            int adc_s_seen[adc_s_arena[2] > 0 ? adc_s_nc : 0];
            int adc_s_stack[2 * adc_s_arena[2] + 2];
            int adc_s_buf[adc_s_arena[2] > 0 ? adc_s_nc : 0];
            for (int adc_s_r = 0; adc_s_r < adc_s_nr; adc_s_r++) {{
                int adc_s_h = adc_s_heads[adc_s_r];
                if (adc_s_h < 0) {{ {one} }}
                else if (adc_s_h > 0) {{
                    int adc_s_n = adc_s_arena[adc_s_h];
                    if (adc_s_n > 0) {{ {set} }}
                    else {{
                        {lazy}
                    }}
                }}
            }}
"
    )
}

/// `NAME__deps`: one run of the sweep with the arena given; the set of
/// each row to `adc_s_heads`; false when the arena was too small.
fn deps(f: &FuncDecl, name: &str, dual: &[bool], l: &Layout) -> String {
    let float_ret = matches!(f.ret, ReturnType::Base(t) if is_float(t));
    let mut s = String::new();
    let mut ps = params(f);
    ps.push("inout int[] adc_s_arena".into());
    ps.push("out int[] adc_s_heads".into());
    let _ = writeln!(s, "static bool {name}__deps({}) {{", ps.join(", "));
    // Column c's set {c} is the handle -(c + 1), in no room.
    // The header: the next free offset, the overflow flag, the number of
    // union nodes, the set the last union made (`ad::sets`).
    let _ = writeln!(s, "    adc_s_arena[0] = 4;");
    let _ = writeln!(s, "    adc_s_arena[1] = 0;");
    let _ = writeln!(s, "    adc_s_arena[2] = 0;");
    let _ = writeln!(s, "    adc_s_arena[3] = 0;");
    let mut args = seeds(&mut s, f, dual, l);
    args.push("adc_s_arena".into());
    let call = format!("{name}__pattern({})", args.join(", "));
    if float_ret {
        let _ = writeln!(s, "    adc_s_heads[0] = int({call});");
    } else {
        let _ = writeln!(s, "    {call};");
    }
    for (k, p) in f.params.iter().enumerate() {
        let Some(at) = &l.row_at[k] else { continue };
        let n = &p.name.name;
        if p.is_array {
            let _ = writeln!(s, "    for (int adc_s_i = 0; adc_s_i < len({n}); adc_s_i++) adc_s_heads[{at} + adc_s_i] = int(adc_s_t_{n}[adc_s_i]);");
        } else {
            let _ = writeln!(s, "    adc_s_heads[{at}] = int(adc_s_t_{n});");
        }
    }
    let _ = writeln!(s, "    return adc_s_arena[1] == 0;");
    let _ = writeln!(s, "}}");
    s
}

/// Declarations of the tangents `adc_s_t_NAME` of the `Dual`
/// parameters, each column's set `{c}` (the handle `-(c + 1)`), into
/// `s`; returns `F`'s arguments, each `Dual` one followed by its tangent.
pub(crate) fn seeds(s: &mut String, f: &FuncDecl, dual: &[bool], l: &Layout) -> Vec<String> {
    let mut args = Vec::new();
    for (k, (p, &d)) in f.params.iter().zip(dual).enumerate() {
        let n = &p.name.name;
        args.push(n.clone());
        if !d {
            continue;
        }
        let t = format!("adc_s_t_{n}");
        args.push(t.clone());
        if p.is_array {
            if let Some(at) = &l.col_at[k] {
                // Every element is written next: no zeroing.
                let _ = writeln!(s, "    double {t}[__adc_uninit(len({n}))];");
                let _ = writeln!(s, "    for (int adc_s_i = 0; adc_s_i < len({n}); adc_s_i++) {t}[adc_s_i] = double(-1 - ({at} + adc_s_i));");
            } else {
                let _ = writeln!(s, "    double {t}[len({n})];");
            }
        } else {
            let seed = match &l.col_at[k] {
                Some(at) => format!("double(-1 - {at})"),
                None => "0.0".into(),
            };
            let _ = writeln!(s, "    double {t} = {seed};");
        }
    }
    args
}

/// `NAME__fill`: the rows from the sets, the coloring, then
/// [`compressed`]'s evaluation; does what `F` does and returns its
/// result. Its loops are in the helpers of
/// [`super::sparse_helpers::helpers`], one loop nest each, out of line.
fn fill(f: &FuncDecl, name: &str, l: &Layout, force: Force) -> String {
    let ret = ret_type(f);
    let mut s = String::new();
    let [vals, cols, rows] = sparse_names(f);
    let mut ps = params(f);
    ps.extend([
        format!("out double[] {vals}"),
        format!("out int[] {cols}"),
        format!("out int[] {rows}"),
        "inout int[] adc_s_a".into(),
        "int[] adc_s_h".into(),
    ]);
    let _ = writeln!(s, "static {ret} {name}__fill({}) {{", ps.join(", "));
    let _ = writeln!(s, "    int adc_s_nc = {};", l.ncols);
    let _ = writeln!(s, "    int adc_s_seen[adc_s_a[2] > 0 ? adc_s_nc : 0];");
    let _ = writeln!(s, "    int adc_s_stack[2 * adc_s_a[2] + 2];");
    let _ = writeln!(
        s,
        "    int adc_s_nnz = {name}__rows(adc_s_h, adc_s_a, {rows}, {cols}, adc_s_seen, adc_s_stack);"
    );
    // Short arrays: the runtime error `jacobian needs N entries`.
    for a in [&vals, &cols] {
        let _ = writeln!(s, "    {}(adc_s_nnz, {a});", crate::lower::SPARSE_LEN);
    }
    let _ = writeln!(s, "    int adc_s_color[adc_s_nc];");
    if force == Force::Columns {
        let _ = writeln!(
            s,
            "    int adc_s_ncolors = {name}__colcolor(len(adc_s_h), {rows}, {cols}, adc_s_color);"
        );
    } else {
        s += &sparse_rows::fill_statements(f, name, force);
        if force == Force::Rows {
            let _ = writeln!(s, "}}");
            return s;
        }
    }
    let _ = writeln!(s, "    int adc_s_lane[0];");
    let _ = writeln!(s, "    int adc_s_from[0];");
    let args = names(f);
    let sep = if args.is_empty() { "" } else { ", " };
    let call = format!(
        "{name}__compressed({args}{sep}{vals}, {cols}, {rows}, adc_s_color, adc_s_ncolors, adc_s_lane, adc_s_from)"
    );
    if ret != "void" {
        let _ = writeln!(s, "    return {call};");
    } else {
        let _ = writeln!(s, "    {call};");
    }
    let _ = writeln!(s, "}}");
    s
}

/// `NAME__compressed`: the compressed evaluation with the columns'
/// `color`s (`ncolors` of them), whose entries go to `vals` at the places
/// of `cols`/`rows`: entry `q` of row `r` is lane `color[cols[q]]` of row
/// `r` (direct: a Jacobian's coloring, or a Hessian's lower triangle under
/// it), or, when `lane` is not empty, lane `lane[q]` of row `from[q]` (a
/// Hessian's star coloring, `crate::hessian::sparse`). Does what `F` does
/// and returns its result. `restores`: `F`'s `inout` and `out` arguments
/// saved on entry and restored before each run; without it, `F` must
/// write every element of its `out` arrays (and so of their tangents)
/// before reading it and nothing else (a sparse Hessian's `NAME__gw`,
/// [`Force::Colors`]): the tangents of its `out` arrays start unset.
/// `w`: the lanes of `NAME__columns` ([`CHUNK`]), or of `NAME__columnsW`
/// for `NAME__compressedW` ([`NARROW`], [`WIDE`]), and the colors of each
/// run.
fn compressed(
    f: &FuncDecl,
    name: &str,
    dual: &[bool],
    l: &Layout,
    (restores, w): (bool, u32),
) -> String {
    let sfx = if w == CHUNK {
        String::new()
    } else {
        w.to_string()
    };
    let float_ret = matches!(f.ret, ReturnType::Base(t) if is_float(t));
    let ret = ret_type(f);
    let has_ret = ret != "void";
    let mut s = String::new();
    let [vals, cols, rows] = sparse_names(f);
    let mut ps = params(f);
    ps.extend([
        format!("out double[] {vals}"),
        format!("int[] {cols}"),
        format!("int[] {rows}"),
        "int[] adc_s_color".into(),
        "int adc_s_ncolors".into(),
        "int[] adc_s_lane".into(),
        "int[] adc_s_from".into(),
    ]);
    let _ = writeln!(
        s,
        "static {ret} {name}__compressed{sfx}({}) {{",
        ps.join(", ")
    );
    let (save, restore) = if restores {
        save_restore(f)
    } else {
        Default::default()
    };
    s += &save;
    for (p, &d) in f.params.iter().zip(dual) {
        if d {
            let n = &p.name.name;
            // Without `restores`, `F` writes its `out` arrays' tangents
            // before reading them: they need no zeros.
            let size = format!("{w} * {}", len(p));
            let size = if !restores && p.mode == Mode::Out {
                format!("__adc_uninit({size})")
            } else {
                size
            };
            let _ = writeln!(s, "    {} adc_s_t_{n}[{size}];", type_name(p.ty));
        }
    }
    if float_ret {
        let _ = writeln!(s, "    {ret} adc_s_tr[{w}];");
    }
    if has_ret {
        let zero = match f.ret {
            ReturnType::Base(BaseType::Bool) => "false",
            ReturnType::Base(BaseType::Int) => "0",
            _ => "0.0",
        };
        let _ = writeln!(s, "    {ret} adc_s_ret = {zero};");
    }
    let mut args = chunks(
        &mut s,
        f,
        dual,
        ("adc_s_ncolors", w, &restore),
        "adc_s_t_",
        &mut |s, k, p| {
            let (n, m) = (&p.name.name, len(p));
            // Fresh arrays are zeros: later chunks zero what the last wrote.
            let _ = writeln!(s, "        if (adc_s_c0 > 0) {{ for (int adc_s_i = 0; adc_s_i < {w} * {m}; adc_s_i++) adc_s_t_{n}[adc_s_i] = 0.0; }}");
            if let Some(at) = &l.col_at[k] {
                let sfx = lane_suffix(p.ty);
                let _ = writeln!(
                    s,
                    "        {name}__seed{sfx}(adc_s_t_{n}, {at}, {m}, adc_s_c0, {w}, adc_s_color);"
                );
            }
        },
    );
    if float_ret {
        args.push("adc_s_tr".into());
    }
    let call = format!("{name}__columns{sfx}({})", args.join(", "));
    if has_ret {
        let _ = writeln!(s, "        adc_s_ret = {call};");
    } else {
        let _ = writeln!(s, "        {call};");
    }
    let scatter = |s: &mut String, (t, ty): (&str, BaseType), at: &str, m: &str| {
        let sfx = lane_suffix(ty);
        let _ = writeln!(
            s,
            "        if (len(adc_s_lane) > 0) {{ {name}__pick{sfx}({t}, {at}, {m}, adc_s_c0, {w}, adc_s_lane, adc_s_from, {vals}); }}
        else {{ {name}__scatter{sfx}({t}, {at}, {m}, adc_s_c0, {w}, adc_s_ncolors, {rows}, {cols}, adc_s_color, {vals}); }}"
        );
    };
    if let ReturnType::Base(t) = f.ret {
        if is_float(t) {
            scatter(&mut s, ("adc_s_tr", t), "0", "1");
        }
    }
    for (k, p) in f.params.iter().enumerate() {
        let Some(at) = &l.row_at[k] else { continue };
        let n = &p.name.name;
        scatter(&mut s, (&format!("adc_s_t_{n}"), p.ty), at, &len(p));
    }
    let _ = writeln!(s, "    }}");
    if has_ret {
        let _ = writeln!(s, "    return adc_s_ret;");
    }
    let _ = writeln!(s, "}}");
    s
}

/// The head of the loop over chunks of `step` colors (`count` of them;
/// one run at least) and its first statements: `restore` (`F`'s
/// `inout` arguments as on entry) and `each(s, k, p)` for each `Dual`
/// parameter `p` (the `k`-th). Returns `F`'s arguments, each `Dual`
/// one followed by its derivative array `{prefix}NAME`.
pub(crate) fn chunks(
    s: &mut String,
    f: &FuncDecl,
    dual: &[bool],
    (count, step, restore): (&str, u32, &str),
    prefix: &str,
    each: &mut dyn FnMut(&mut String, usize, &ParamDecl),
) -> Vec<String> {
    let _ = writeln!(
        s,
        "    for (int adc_s_c0 = 0; adc_s_c0 < {count} || adc_s_c0 == 0; adc_s_c0 += {step}) {{"
    );
    *s += restore;
    let mut args = Vec::new();
    for (k, (p, &d)) in f.params.iter().zip(dual).enumerate() {
        args.push(p.name.name.clone());
        if d {
            args.push(format!("{prefix}{}", p.name.name));
            each(s, k, p);
        }
    }
    args
}
