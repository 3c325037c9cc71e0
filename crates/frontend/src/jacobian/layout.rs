//! What the generators of Jacobians and Hessians (`.ad` text) share:
//! `F`'s parameters as declared, and where each parameter's columns and
//! rows start (docs/jacobians.md#jacobians: columns are the floating
//! inputs, rows the float result and then the floating outputs, each
//! parameter a block of `len` entries in parameter order).

use super::type_name;
use crate::ast::*;
use std::fmt::Write;

/// Where each parameter's columns and rows start (`None`: it has none),
/// and the expressions counting them.
pub(crate) struct Layout {
    pub col_at: Vec<Option<String>>,
    pub row_at: Vec<Option<String>>,
    pub ncols: String,
    pub nrows: String,
}

/// The name of a parameter that a generated function adds after `f`'s
/// (`jac`, `hess`, `vals`, ...): `base`, with `_` appended while a
/// parameter of `f` has it, as a derivative's shadow `d_x` becomes `d_x_`;
/// so no parameter name of `f` is ever refused.
pub(crate) fn free_name(f: &FuncDecl, base: &str) -> String {
    let mut name = base.to_string();
    while f.params.iter().any(|p| p.name.name == name) {
        name.push('_');
    }
    name
}

/// The free names ([`free_name`]) of a sparse Jacobian's or Hessian's
/// `vals`, `cols` and `rows`.
pub(crate) fn sparse_names(f: &FuncDecl) -> [String; 3] {
    ["vals", "cols", "rows"].map(|b| free_name(f, b))
}

/// The number of entries of `p`: `len(p)` for an array, 1 for a scalar.
pub(crate) fn len(p: &ParamDecl) -> String {
    if p.is_array {
        format!("len({})", p.name.name)
    } else {
        "1".into()
    }
}

/// The layout of the `Dual` parameters `dual` of `f`; `result_row` when
/// the result is the first row.
pub(crate) fn layout(f: &FuncDecl, dual: &[bool], result_row: bool) -> Layout {
    let first_rows = if result_row { "1" } else { "0" };
    let (mut ncols, mut nrows) = (vec!["0".to_string()], vec![first_rows.to_string()]);
    let (mut col_at, mut row_at) = (Vec::new(), Vec::new());
    for (p, &d) in f.params.iter().zip(dual) {
        let is_col = d && p.mode != Mode::Out;
        let is_row = d && p.mode != Mode::Value;
        col_at.push(is_col.then(|| format!("({})", ncols.join(" + "))));
        row_at.push(is_row.then(|| format!("({})", nrows.join(" + "))));
        if is_col {
            ncols.push(len(p));
        }
        if is_row {
            nrows.push(len(p));
        }
    }
    Layout {
        col_at,
        row_at,
        ncols: ncols.join(" + "),
        nrows: nrows.join(" + "),
    }
}

/// `f`'s parameters as declared (`inout double[] x`).
pub(crate) fn param_decls(f: &FuncDecl) -> Vec<String> {
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

/// Declarations saving `F`'s `inout` and `out` arguments on entry
/// (`Const` ones and integers too: each run of `F`'s code writes them,
/// and may read what an earlier run wrote), and statements restoring them
/// before each run (each generator runs `F`'s code once per chunk, and
/// the last run leaves `F`'s writes).
pub(crate) fn save_restore(f: &FuncDecl) -> (String, String) {
    let (mut save, mut restore) = (String::new(), String::new());
    for p in &f.params {
        let n = &p.name.name;
        if p.mode == Mode::Value {
            continue;
        }
        let t = type_name(p.ty);
        if p.is_array {
            // Every element is copied next: no zeroing.
            let _ = writeln!(save, "    {t} adc_s_s_{n}[__adc_uninit(len({n}))];");
            let _ = writeln!(save, "    for (int adc_s_i = 0; adc_s_i < len({n}); adc_s_i++) adc_s_s_{n}[adc_s_i] = {n}[adc_s_i];");
            let _ = writeln!(restore, "        for (int adc_s_i = 0; adc_s_i < len({n}); adc_s_i++) {n}[adc_s_i] = adc_s_s_{n}[adc_s_i];");
        } else {
            let _ = writeln!(save, "    {t} adc_s_s_{n} = {n};");
            let _ = writeln!(restore, "        {n} = adc_s_s_{n};");
        }
    }
    (save, restore)
}
