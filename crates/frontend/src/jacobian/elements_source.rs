//! The code of element Jacobians (see `elements` for when they apply,
//! docs/jacobians.md#sparse-jacobians for what they compute).
//!
//! For an element plan of `F`, `NAME`'s dependency sweep stays as it is
//! (the pattern: the rows' columns, in `adc_s_a`/`adc_s_h`), and
//! `NAME__elems` replaces the coloring and compressed evaluation:
//!
//! 1. Ownership: it replays `F`'s declarations and loop headers
//!    and evaluates each loop's sites at every iteration; a row named by
//!    two sites (of one iteration or two), or a row with entries that no
//!    site names, sends it to `NAME__fill` (the coloring) instead.
//! 2. Each loop `k` with `W` sites has its body outlined as the `static`
//!    function `NAME__eK` (parameters: those of `F`'s the body names, the
//!    loop variable, the variables declared before the loop that it names),
//!    with a reverse derivative `NAME__eKb` of width `W` (`Duplicated` for
//!    `F`'s `Dual` arrays).
//!    Per iteration, lane `j` of the `out` shadows is seeded at site `j`'s
//!    row, one run gives the `W` rows' gradients, which are gathered into
//!    `vals` at the pattern's columns; those shadow elements are zeroed
//!    again, so the next iteration starts from zeros.
//!
//! Locals start with `adc_e_` (and `adc_s_` for the sweep's).

use super::elements::{Plan, Top};
use super::elements_static::loop_head;
use super::layout::{layout, param_decls as params, Layout};
use super::type_name;
use crate::ast::*;
use std::collections::BTreeSet;
use std::fmt::Write;

fn ident(name: &str, span: adc_ir::Span) -> Ident {
    Ident {
        name: name.into(),
        span,
    }
}

/// The declarations before the `k`th statement of the plan that its body
/// names (their values depend on no input: `Const` in `NAME__eKb`).
pub(super) fn captured(plan: &Plan, k: usize) -> Vec<(BaseType, String)> {
    let used = used(plan, k);
    plan.tops[..k]
        .iter()
        .filter_map(|t| match t {
            Top::Decl { ty, name, .. } if used.contains(name) => Some((*ty, name.clone())),
            _ => None,
        })
        .collect()
}

/// Which of `F`'s parameters the `k`th statement's loop body names: the
/// outlined body takes those alone (a name it does not use is no value
/// the body can reach, since names are resolved in the body's scope and
/// callees see only what it passes them).
pub(super) fn kept(f: &FuncDecl, plan: &Plan, k: usize) -> Vec<bool> {
    let used = used(plan, k);
    f.params
        .iter()
        .map(|p| used.contains(&p.name.name))
        .collect()
}

/// Every name the `k`th statement's loop body uses as a variable, but
/// its loop variable: the body's `i` is the loop's even where a parameter
/// or an integer before the loop is named `i` too (`for (int i = ...)`
/// shadows it), and the outlined body must not take two parameters `i`.
fn used(plan: &Plan, k: usize) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if let Top::Loop { body, var, .. } = &plan.tops[k] {
        body.iter().for_each(|s| stmt_names(s, &mut out));
        out.remove(var);
    }
    out
}

fn stmt_names(s: &Stmt, out: &mut BTreeSet<String>) {
    let mut e = |x: &Expr| expr_names(x, out);
    match s {
        Stmt::Decl { init, .. } => init.iter().for_each(e),
        Stmt::ArrayDecl { len, init, .. } => {
            len.iter().for_each(&mut e);
            init.iter().flatten().for_each(e);
        }
        Stmt::Destructure { value, .. } | Stmt::Expr(value) => e(value),
        Stmt::Assign { target, value, .. } => {
            e(target);
            e(value);
        }
        Stmt::IncDec { target, .. } => e(target),
        Stmt::Return(v, _) => v.iter().for_each(e),
        Stmt::If {
            cond,
            then_branch,
            else_branch,
            ..
        } => {
            e(cond);
            let rest = then_branch.iter().chain(else_branch.iter().flatten());
            rest.for_each(|s| stmt_names(s, out));
        }
        Stmt::While { cond, body, .. } => {
            e(cond);
            body.iter().for_each(|s| stmt_names(s, out));
        }
        Stmt::For {
            init,
            cond,
            step,
            body,
            ..
        } => {
            cond.iter().for_each(e);
            let parts = init.iter().chain(step).map(|b| &**b).chain(body);
            parts.for_each(|s| stmt_names(s, out));
        }
        Stmt::Block(body) => body.iter().for_each(|s| stmt_names(s, out)),
        Stmt::Attributed { stmt, .. } => stmt_names(stmt, out),
        Stmt::Break(_) | Stmt::Continue(_) | Stmt::Error => (),
    }
}

fn expr_names(e: &Expr, out: &mut BTreeSet<String>) {
    match &e.kind {
        ExprKind::Var(n) => {
            out.insert(n.clone());
        }
        ExprKind::Unary(_, a) | ExprKind::Cast(_, a) => expr_names(a, out),
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
            expr_names(a, out);
            expr_names(b, out);
        }
        ExprKind::Ternary(a, b, c) => [a, b, c].into_iter().for_each(|x| expr_names(x, out)),
        ExprKind::View(a, lo, hi) => {
            expr_names(a, out);
            expr_names(lo, out);
            hi.iter().for_each(|h| expr_names(h, out));
        }
        ExprKind::Call(_, xs) | ExprKind::Tuple(xs) => xs.iter().for_each(|x| expr_names(x, out)),
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Error => (),
    }
}

/// The outlined loop bodies `NAME__eK`, each with its reverse derivative
/// `NAME__eKb` requested, and their names.
pub(super) fn outlined(
    f: &FuncDecl,
    name: &str,
    dual: &[bool],
    plan: &Plan,
    span: adc_ir::Span,
) -> (Vec<Item>, Vec<String>) {
    let mut items = Vec::new();
    let mut names = Vec::new();
    for (k, t) in plan.tops.iter().enumerate() {
        let Top::Loop {
            var, body, sites, ..
        } = t
        else {
            continue;
        };
        if sites.is_empty() {
            continue;
        }
        let keep = kept(f, plan, k);
        let mut ps: Vec<ParamDecl> = (f.params.iter().zip(&keep))
            .filter(|(_, &k)| k)
            .map(|(p, _)| p.clone())
            .collect();
        let mut acts: Vec<AttrArg> = vec![AttrArg::Ident(ident(&format!("{name}__e{k}b"), span))];
        for (d, _) in dual.iter().zip(&keep).filter(|(_, &k)| k) {
            let a = if *d { "Duplicated" } else { "Const" };
            acts.push(AttrArg::Ident(ident(a, span)));
        }
        let mut extra = vec![(BaseType::Int, var.clone())];
        extra.extend(captured(plan, k));
        for (ty, n) in extra {
            ps.push(ParamDecl {
                mode: Mode::Value,
                ty,
                is_array: false,
                name: ident(&n, span),
                span,
            });
            acts.push(AttrArg::Ident(ident("Const", span)));
        }
        // A `double` result (0, its seed 0): reverse vector mode needs one.
        acts.push(AttrArg::Ident(ident("Active", span)));
        if sites.len() > 1 {
            acts.push(AttrArg::Named(
                ident("width", span),
                Box::new(AttrArg::Int(sites.len() as i64, span)),
                span,
            ));
        }
        // A run reads few elements of each input's shadow, far apart
        // (`Function::cold`).
        acts.push(AttrArg::Named(
            ident(crate::lower::COLD_OPTION, span),
            Box::new(AttrArg::Int(1, span)),
            span,
        ));
        // The dependency sweep: the same activities as `Dual`, no width.
        let mut fwd: Vec<AttrArg> = vec![AttrArg::Ident(ident(&format!("{name}__e{k}p"), span))];
        for a in &acts[1..] {
            match a {
                AttrArg::Ident(id) if id.name == "Duplicated" => {
                    fwd.push(AttrArg::Ident(ident("Dual", span)))
                }
                AttrArg::Ident(id) if id.name == "Const" => fwd.push(a.clone()),
                _ => (),
            }
        }
        fwd.push(AttrArg::Ident(ident("Const", span)));
        fwd.push(AttrArg::Named(
            ident(crate::lower::SETS_OPTION, span),
            Box::new(AttrArg::Int(1, span)),
            span,
        ));
        // The sweep of bit sets (`masks`): the same, `__adc_sets = 2`.
        let mut masks = fwd.clone();
        masks[0] = AttrArg::Ident(ident(&format!("{name}__e{k}m"), span));
        if let Some(AttrArg::Named(_, v, _)) = masks.last_mut() {
            **v = AttrArg::Int(2, span);
        }
        let sweep = Attr {
            name: ident("autodiff_forward", span),
            args: Some(fwd),
            span,
        };
        let masks = Attr {
            name: ident("autodiff_forward", span),
            args: Some(masks),
            span,
        };
        let mut body = body.clone();
        let zero = Expr {
            kind: ExprKind::Float("0.0".into()),
            span,
        };
        body.push(Stmt::Return(Some(zero), span));
        let attr = Attr {
            name: ident("autodiff_reverse", span),
            args: Some(acts),
            span,
        };
        // A loop with a static pattern runs no sweep.
        let is_static = plan.statics[k].is_some();
        let attrs = if is_static {
            vec![attr]
        } else {
            vec![attr, sweep, masks]
        };
        items.push(Item::Func(FuncDecl {
            attrs,
            ret: ReturnType::Base(BaseType::Double),
            name: ident(&format!("{name}__e{k}"), span),
            params: ps,
            body: Some(body),
            is_static: true,
            span,
        }));
        names.push(format!("{name}__e{k}"));
        names.push(format!("{name}__e{k}b"));
        if !is_static {
            names.push(format!("{name}__e{k}p"));
            names.push(format!("{name}__e{k}m"));
        }
    }
    (items, names)
}

/// The replayed declarations of `F` (each `Top::Decl`), and for each
/// loop with sites, `per_loop(k)`.
fn replay(plan: &Plan, s: &mut String, per_loop: &mut dyn FnMut(&mut String, usize)) {
    for (k, t) in plan.tops.iter().enumerate() {
        match t {
            Top::Decl { ty, name, init } => {
                let _ = writeln!(s, "        {} {name} = {init};", type_name(*ty));
            }
            Top::Loop { sites, .. } if !sites.is_empty() => per_loop(s, k),
            Top::Loop { .. } => (),
        }
    }
}

/// `NAME`, which tries `NAME__elems` and else runs `colored` (the
/// coloring), and `NAME__elems`.
pub(super) fn source(
    f: &FuncDecl,
    name: &str,
    dual: &[bool],
    plan: &Plan,
    colored: &str,
) -> String {
    let l = layout(f, dual, false);
    let mut ps = params(f);
    ps.extend([
        "out double[] vals".to_string(),
        "out int[] cols".into(),
        "out int[] rows".into(),
    ]);
    let mut args: Vec<String> = f.params.iter().map(|p| p.name.name.clone()).collect();
    args.extend(["vals", "cols", "rows"].map(String::from));
    let args = args.join(", ");
    let stat = if f.is_static { "static " } else { "" };
    let mut s = String::new();
    let _ = writeln!(s, "{stat}void {name}({}) {{", ps.join(", "));
    let _ = writeln!(
        s,
        "    if (!{name}__elems({args})) {{ {colored}({args}); }}"
    );
    let _ = writeln!(s, "}}");
    let _ = writeln!(s, "static bool {name}__elems({}) {{", ps.join(", "));
    let _ = writeln!(s, "    int adc_s_nc = {};", l.ncols);
    let _ = writeln!(s, "    int adc_s_nr = {};", l.nrows);
    let _ = writeln!(s, "    {}(adc_s_nr + 1, rows);", crate::lower::SPARSE_LEN);
    // 1. The sites' rows, in the order they run, must increase.
    let _ = writeln!(s, "    bool adc_e_ok = true;");
    let _ = writeln!(s, "    {{");
    let _ = writeln!(s, "        int adc_e_last = -1;");
    replay(plan, &mut s, &mut |s, k| {
        let Top::Loop {
            var,
            from,
            cond,
            sites,
            ..
        } = &plan.tops[k]
        else {
            return;
        };
        let _ = writeln!(s, "        for (int {var} = {from}; {cond}; {var}++) {{");
        for site in sites {
            let p = &f.params[site.param];
            let at = row_at(&l, site.param);
            let _ = writeln!(s, "            {{ int adc_e_r = {}; if (adc_e_r >= 0 && adc_e_r < len({})) {{ int adc_e_g = {at} + adc_e_r; if (adc_e_g <= adc_e_last) {{ adc_e_ok = false; }} adc_e_last = adc_e_g; }} }}", site.index, p.name.name);
        }
        let _ = writeln!(s, "        }}");
    });
    let _ = writeln!(s, "    }}");
    let _ = writeln!(s, "    if (!adc_e_ok) {{ return false; }}");
    // Whether a loop sweeps (has no static pattern): only then are the
    // sweeps' tangents, arena and stamps made.
    let sweeps = plan.sweeps();
    // The sweep's tangents: column c's set {c} is the handle -(c + 1).
    for (p, (&d, at)) in f.params.iter().zip(dual.iter().zip(&l.col_at)) {
        if !d || !sweeps {
            continue;
        }
        let n = &p.name.name;
        // An input's seeds are all written here: no zero-fill first.
        let size = match at {
            Some(_) => format!("__adc_uninit(len({n}))"),
            None => format!("len({n})"),
        };
        let _ = writeln!(s, "    double adc_e_t_{n}[{size}];");
        if let Some(at) = at {
            let _ = writeln!(s, "    for (int adc_e_i = 0; adc_e_i < len({n}); adc_e_i++) {{ adc_e_t_{n}[adc_e_i] = double(-1 - ({at} + adc_e_i)); }}");
        }
    }
    // 2. The elements, again from the start with twice the room when an
    // element's sets outgrow the arena.
    // (`seen` and the stamps: `NAME__lazy`'s, flattening union nodes.)
    if sweeps {
        s += "    int adc_e_cap = 4096;
    int adc_e_seen[adc_s_nc];
    int adc_e_stamp = 0;
";
    }
    s += "    bool adc_e_done = false;
    while (!adc_e_done) {
        adc_e_done = true;
";
    if sweeps {
        s += "        int adc_e_a[adc_e_cap];\n";
    }
    s += "        int adc_e_q = 0;
        int adc_e_next = 0;
        // (Entries past the shorter of `vals` and `cols` are counted, not
        // written: the error below says how many there are.)
        int adc_e_room = len(vals) < len(cols) ? len(vals) : len(cols);
        {
";
    replay(plan, &mut s, &mut |s, k| {
        element_loop(s, f, name, dual, plan, &l, k)
    });
    s += "        }
        while (adc_e_next <= adc_s_nr) { rows[adc_e_next] = adc_e_q; adc_e_next++; }
        if (adc_e_done) {
            __adc_sparse_len(adc_e_q, vals);
            __adc_sparse_len(adc_e_q, cols);
        }
    }
    return true;
}
";
    if sweeps {
        s += &super::elements_masks::helpers(name);
    }
    s
}

pub(super) fn row_at(l: &Layout, param: usize) -> &str {
    l.row_at[param]
        .as_deref()
        .expect("invariant: a site's array is an `out` Dual array, a row block")
}

/// One loop of step 2: per iteration, the sweep of the outlined body for
/// the rows' columns, its reverse run for their values.
fn element_loop(
    s: &mut String,
    f: &FuncDecl,
    name: &str,
    dual: &[bool],
    plan: &Plan,
    l: &Layout,
    k: usize,
) {
    let Top::Loop {
        var,
        from,
        cond,
        sites,
        ..
    } = &plan.tops[k]
    else {
        return;
    };
    if let Some(pattern) = &plan.statics[k] {
        return super::elements_static::element_loop(s, f, name, dual, plan, l, k, pattern);
    }
    let w = sites.len();
    let _ = writeln!(s, "        {{");
    let (mut rev, mut fwd) = (Vec::new(), Vec::new());
    let keep = kept(f, plan, k);
    // The input arrays the body reads, their first columns, where their
    // shadows start in `adc_e_dd` (`w` lanes each) and their lengths.
    let mut inputs: Vec<(String, String, String, String)> = Vec::new();
    let mut dd = String::from("0");
    for ((p, (&d, at)), &kp) in f.params.iter().zip(dual.iter().zip(&l.col_at)).zip(&keep) {
        if let (true, true, Some(at)) = (d, kp, at) {
            let n = &p.name.name;
            inputs.push((n.clone(), at.clone(), dd.clone(), format!("len({n})")));
            dd = format!("{dd} + {w} * len({n})");
        }
    }
    let _ = writeln!(s, "            double adc_e_dd[{dd}];");
    for (i, (p, &d)) in f.params.iter().zip(dual).enumerate() {
        if !keep[i] {
            continue;
        }
        let n = &p.name.name;
        rev.push(n.clone());
        fwd.push(n.clone());
        if let Some((_, _, a, _)) = inputs.iter().find(|x| &x.0 == n) {
            rev.push(format!("adc_e_dd[{a} .. {a} + {w} * len({n})]"));
            fwd.push(format!("adc_e_t_{n}"));
        } else if d {
            // An `out` array this loop has no site in is not written by its
            // body (`elements::plan`), so its derivatives leave the shadow
            // alone: it needs no zero-fill.
            let size = if p.mode == Mode::Out && !sites.iter().any(|s| s.param == i) {
                format!("__adc_uninit({w} * len({n}))")
            } else {
                format!("{w} * len({n})")
            };
            let _ = writeln!(s, "            double adc_e_d_{n}[{size}];");
            rev.push(format!("adc_e_d_{n}"));
            fwd.push(format!("adc_e_t_{n}"));
        }
    }
    let mut extra = vec![var.clone()];
    extra.extend(captured(plan, k).into_iter().map(|(_, n)| n));
    rev.extend(extra.iter().cloned());
    fwd.extend(extra);
    fwd.push("adc_e_a".into());
    if w > 1 {
        let _ = writeln!(s, "            double adc_e_seed[{w}];");
    }
    // (No column of another input is in this loop's rows.)
    let bases: Vec<String> = inputs.iter().map(|x| x.1.clone()).collect();
    let starts: Vec<String> = inputs.iter().map(|x| x.2.clone()).collect();
    let lens: Vec<String> = inputs.iter().map(|x| x.3.clone()).collect();
    super::elements_masks::declare(s, w, &bases, &starts, &lens);
    loop_head(s, f, (var, from, cond), sites);
    let _ = writeln!(s, "                bool adc_e_fast = false;");
    let _ = writeln!(s, "                if (adc_e_done) {{");
    let mut fwdm = fwd.clone();
    fwdm.pop();
    fwdm.push("adc_e_m".into());
    let masks: Vec<String> = sites
        .iter()
        .enumerate()
        .map(|(j, site)| {
            let n = &f.params[site.param].name.name;
            format!("adc_e_v{j} ? int(adc_e_t_{n}[adc_e_r{j}]) : -1")
        })
        .collect();
    super::elements_masks::sweep(
        s,
        name,
        &format!("{name}__e{k}m({})", fwdm.join(", ")),
        &masks,
    );
    let _ = writeln!(s, "                if (!adc_e_fast) {{");
    let _ = writeln!(s, "                adc_e_a[0] = 4;");
    let _ = writeln!(s, "                adc_e_a[1] = 0;");
    let _ = writeln!(s, "                adc_e_a[2] = 0;");
    let _ = writeln!(s, "                adc_e_a[3] = 0;");
    let _ = writeln!(s, "                {name}__e{k}p({});", fwd.join(", "));
    let _ = writeln!(
        s,
        "                if (adc_e_a[1] != 0) {{ adc_e_done = false; adc_e_cap = 2 * (adc_e_a[0] > adc_e_cap ? adc_e_a[0] : adc_e_cap); }}"
    );
    let _ = writeln!(s, "                }}");
    let _ = writeln!(s, "                }}");
    let _ = writeln!(s, "                if (adc_e_done) {{");
    for (j, site) in sites.iter().enumerate() {
        let n = &f.params[site.param].name.name;
        let _ = writeln!(
            s,
            "                if (adc_e_v{j}) {{ adc_e_d_{n}[{j} * len({n}) + adc_e_r{j}] = 1.0; }}"
        );
    }
    if w > 1 {
        rev.push("adc_e_seed".into());
    } else {
        rev.push("0.0".into());
    }
    let _ = writeln!(s, "                {name}__e{k}b({});", rev.join(", "));
    // Column `c` of lane `j`: in `adc_e_dd`, in the shadow of the input
    // holding it.
    let lane = |j: &str, body: &dyn Fn(&str) -> String| {
        let mut t = String::new();
        for (n, at, start, _) in &inputs {
            let cell = format!("adc_e_dd[{start} + {j} * len({n}) + adc_e_c - {at}]");
            let sep = if t.is_empty() { "" } else { " else " };
            let _ = write!(
                t,
                "{sep}if (adc_e_c >= {at} && adc_e_c < {at} + len({n})) {{ {} }}",
                body(&cell)
            );
        }
        t
    };
    for (j, site) in sites.iter().enumerate() {
        let n = &f.params[site.param].name.name;
        let at = row_at(l, site.param);
        let _ = writeln!(s, "                if (adc_e_v{j}) {{ adc_e_d_{n}[{j} * len({n}) + adc_e_r{j}] = 0.0; adc_e_g[{j}] = {at} + adc_e_r{j}; }} else {{ adc_e_g[{j}] = -1; }}");
    }
    let _ = writeln!(s, "                if (adc_e_fast) {{");
    super::elements_masks::gather_call(s, name, w);
    let _ = writeln!(s, "                }} else {{");
    for (j, site) in sites.iter().enumerate() {
        let n = &f.params[site.param].name.name;
        let _ = writeln!(s, "                if (adc_e_v{j}) {{");
        let _ = writeln!(s, "                    while (adc_e_next <= adc_e_g[{j}]) {{ rows[adc_e_next] = adc_e_q; adc_e_next++; }}");
        // Else the row's set: a singleton in its handle, a list, or union
        // nodes that `NAME__lazy` flattens into `cols`.
        let _ = writeln!(s, "                    {{");
        let _ = writeln!(
            s,
            "                    int adc_e_h = int(adc_e_t_{n}[adc_e_r{j}]);"
        );
        let _ = writeln!(s, "                    int adc_e_b = adc_e_q;");
        let _ = writeln!(
            s,
            "                    if (adc_e_h < 0) {{ if (adc_e_q < len(cols)) {{ cols[adc_e_q] = -1 - adc_e_h; }} adc_e_q++; }}"
        );
        let _ = writeln!(
            s,
            "                    else if (adc_e_h > 0 && adc_e_a[adc_e_h] > 0) {{"
        );
        let _ = writeln!(s, "                        for (int adc_e_k = 0; adc_e_k < adc_e_a[adc_e_h]; adc_e_k++) {{ if (adc_e_q < len(cols)) {{ cols[adc_e_q] = adc_e_a[adc_e_h + 1 + adc_e_k]; }} adc_e_q++; }}");
        let _ = writeln!(s, "                    }} else if (adc_e_h > 0) {{");
        let _ = writeln!(
            s,
            "                        int adc_e_stack[2 * adc_e_a[2] + 2];"
        );
        let _ = writeln!(s, "                        adc_e_stamp++;");
        let _ = writeln!(s, "                        adc_e_q = {name}__lazy(adc_e_h, adc_e_stamp, adc_e_a, adc_e_seen, adc_e_stack, cols, adc_e_q);");
        let _ = writeln!(s, "                    }}");
        let _ = writeln!(
            s,
            "                    for (int adc_e_p = adc_e_b; adc_e_p < adc_e_q && adc_e_p < adc_e_room; adc_e_p++) {{"
        );
        let _ = writeln!(s, "                        int adc_e_c = cols[adc_e_p];");
        // Lane `j` is zero outside row `j`'s columns (its adjoint reaches
        // only what the row depends on, which the sweep over-approximates,
        // and adjoints times partials are strong zeros): zeroing what was
        // read leaves every lane zero for the next iteration.
        let get = lane(&j.to_string(), &|cell| {
            format!("vals[adc_e_p] = {cell}; {cell} = 0.0;")
        });
        let _ = writeln!(s, "                        {get}");
        let _ = writeln!(s, "                    }}");
        let _ = writeln!(s, "                    }}");
        let _ = writeln!(s, "                }}");
    }
    let _ = writeln!(s, "                }}");
    let _ = writeln!(s, "                }}");
    let _ = writeln!(s, "            }}");
    let _ = writeln!(s, "        }}");
}
