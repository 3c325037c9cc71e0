//! Items: global constants, attributes, and the per-function
//! driver of the lowering walk.

use super::attrs::AttrRequest;
use super::names::{math_extern_signature, reserved_name};
use super::signature::{fmt_signature, param_ir, ret_ty, RetTy, Signature};
use super::{scalar_of, type_name, Binding, FnLowerer};
use crate::ast::*;
use crate::diag::Diagnostic;
use adc_ir::interp;
use adc_ir::{
    Activity, AdMode, BinaryOp, Constant, FuncId, Function, InstData, Linkage, Module, ScalarType,
    Span, Type,
};
use std::collections::BTreeMap;

pub(crate) struct Globals {
    pub consts: BTreeMap<String, Constant>,
    pub funcs: BTreeMap<String, Signature>,
    /// Names of functions an attribute would have generated but was
    /// rejected: calls of them report nothing more.
    pub failed: std::collections::BTreeSet<String>,
}

/// Lowers a parsed program. Returns the module only when there is no error.
/// `generated` names the functions the compiler wrote (`[jacobian]`'s and
/// `[hessian]`'s): they get no warnings (W0001), which would point at the
/// user's attribute or parameters for code the user did not write.
/// `rejected` names what rejected `[jacobian]`/`[hessian]` attributes
/// would have generated (their calls report nothing more).
pub fn lower_program(
    items: &[Item],
    generated: &std::collections::BTreeSet<&str>,
    rejected: std::collections::BTreeSet<String>,
    diags: &mut Vec<Diagnostic>,
) -> Option<Module> {
    let mut globals = Globals {
        consts: BTreeMap::new(),
        funcs: BTreeMap::new(),
        failed: rejected,
    };
    let mut module = Module::default();
    let mut seen: BTreeMap<String, Span> = BTreeMap::new();
    let mut check_unique = |name: &Ident, diags: &mut Vec<Diagnostic>| {
        if let Some(prev) = seen.get(&name.name) {
            diags.push(
                Diagnostic::error(
                    "E0201",
                    format!("`{}` is defined more than once", name.name),
                    name.span,
                )
                .with_label(*prev, "first defined here"),
            );
            false
        } else {
            seen.insert(name.name.clone(), name.span);
            true
        }
    };
    for item in items {
        match item {
            Item::Const(c) => {
                if check_unique(&c.name, diags) {
                    if let Some(v) = eval_const(&c.value, scalar_of(c.ty), &globals.consts, diags) {
                        globals.consts.insert(c.name.name.clone(), v);
                    }
                }
            }
            Item::Func(f) => {
                if let Some(d) = reserved_name(&f.name, f.body.is_some()) {
                    diags.push(d);
                    continue;
                }
                if let Some(d) = math_extern_signature(f) {
                    diags.push(d);
                    continue;
                }
                if !check_unique(&f.name, diags) {
                    continue;
                }
                let mut pnames: BTreeMap<&str, Span> = BTreeMap::new();
                for p in &f.params {
                    if let Some(prev) = pnames.insert(&p.name.name, p.name.span) {
                        diags.push(
                            Diagnostic::error(
                                "E0203",
                                format!("parameter `{}` is declared twice", p.name.name),
                                p.name.span,
                            )
                            .with_label(prev, "first declared here"),
                        );
                    }
                }
                let ret = ret_ty(&f.ret);
                let linkage = match (f.body.is_some(), f.is_static) {
                    (false, _) => Linkage::Import,
                    (true, true) => Linkage::Static,
                    (true, false) => Linkage::Export,
                };
                let mut func = Function::new(
                    f.name.name.clone(),
                    f.params.iter().map(param_ir).collect(),
                    ret.types(),
                    linkage,
                );
                func.decl_span = f.name.span;
                let id = module.push(func);
                let sig = Signature::declared(id, f, module.func(id));
                globals.funcs.insert(f.name.name.clone(), sig);
            }
            Item::Error => (),
        }
    }
    for item in items {
        let Item::Func(f) = item else { continue };
        let Some(id) = globals.funcs.get(&f.name.name).map(|s| s.id) else {
            continue;
        };
        if module.func(id).name != f.name.name {
            continue;
        }
        for a in &f.attrs {
            let request =
                super::attrs::check_function_attr(f, a, &globals, diags, &mut |name, diags| {
                    // A generated function has a body: the names a
                    // definition may not take, it may not take either.
                    if let Some(d) = reserved_name(name, true) {
                        diags.push(d);
                        return false;
                    }
                    check_unique(name, diags)
                });
            if request.is_none() {
                if let Some([crate::ast::AttrArg::Ident(gen), ..]) = a.args.as_deref() {
                    if a.name.name.starts_with("autodiff_") {
                        globals.failed.insert(gen.name.clone());
                    }
                }
            }
            match request {
                Some(AttrRequest::Generate(name, spec, cold)) => {
                    let src = module.func(id);
                    let (params, returns) = adc_ir::ad::spec_signature(src, &spec);
                    // What `static` generates is `static` too.
                    let linkage = if src.linkage == Linkage::Static {
                        Linkage::Static
                    } else {
                        Linkage::Export
                    };
                    let mut func = Function::new(name.name.clone(), params, returns, linkage);
                    func.deriv_span = a.span;
                    let pairs = adc_ir::ad::shadow_pairs(src, &spec);
                    if cold {
                        func.cold = input_shadows(src, &spec);
                    }
                    func.deriv = Some(spec);
                    let gid = module.push(func);
                    let mut sig = Signature::generated(
                        module.func(gid),
                        gid,
                        a.span,
                        &a.name.name,
                        &f.name.name,
                    );
                    sig.shadow_pairs = pairs;
                    globals.funcs.insert(name.name.clone(), sig);
                }
                Some(AttrRequest::Custom(mode, g)) => {
                    check_custom(&mut module, id, mode, &g, &globals, a.span, diags);
                }
                Some(AttrRequest::Checkpoint) => module.func_mut(id).checkpoint = true,
                None => (),
            }
        }
    }
    for item in items {
        if let Item::Func(f) = item {
            let Some(sig) = globals.funcs.get(&f.name.name) else {
                continue;
            };
            // A second definition of a name (E0201) is not lowered with
            // the first one's signature.
            if module.func(sig.id).name != f.name.name
                || sig.params.len() != f.params.len()
                || sig
                    .params
                    .iter()
                    .zip(&f.params)
                    .any(|(a, b)| a.name.span != b.name.span)
            {
                continue;
            }
            if let Some(body) = &f.body {
                let func = module.func(sig.id).clone();
                let before = diags.len();
                let lowered = lower_function(&globals, diags, func, sig, body, f.span);
                if generated.contains(f.name.name.as_str()) {
                    let errors: Vec<Diagnostic> =
                        diags.drain(before..).filter(|d| d.is_error()).collect();
                    diags.extend(errors);
                }
                *module.func_mut(sig.id) = lowered;
            }
        }
    }
    if diags.iter().any(|d| d.is_error()) {
        None
    } else {
        Some(module)
    }
}

/// `[reverse_derivative(G)]` / `[forward_derivative(H)]`: `G` must have the
/// signature `autodiff_reverse` generates with default activities and
/// `ActiveOnly` (`H`: `autodiff_forward`, defaults, `DualOnly`).
/// The positions, in the reverse derivative `spec` of `src`, of the
/// shadows of `src`'s read-only `Duplicated` arrays (each parameter is
/// followed by its shadow, as `adc_ir::ad::shadow_pairs` lays them out,
/// in vector mode too): what `__adc_cold` marks cold.
fn input_shadows(src: &Function, spec: &adc_ir::DerivSpec) -> Vec<usize> {
    let mut out = Vec::new();
    let mut pos = 0;
    for (p, a) in src.params.iter().zip(&spec.params) {
        let shadowed = matches!(a, Activity::Duplicated | Activity::DuplicatedOnly);
        if shadowed && matches!(p.ty, Type::Array(_)) && p.mode == adc_ir::ParamMode::In {
            out.push(pos + 1);
        }
        pos += 1 + usize::from(shadowed);
    }
    out
}

fn check_custom(
    module: &mut Module,
    id: FuncId,
    mode: AdMode,
    g: &Ident,
    globals: &Globals,
    span: Span,
    diags: &mut Vec<Diagnostic>,
) {
    let src = module.func(id);
    let mut spec = adc_ir::ad::default_spec(src, mode);
    if spec.ret == Activity::Dual {
        spec.ret = Activity::DualOnly;
    }
    let (params, returns) = adc_ir::ad::spec_signature(src, &spec);
    let gid = globals.funcs[&g.name].id;
    let given = module.func(gid);
    let same = given.returns == returns
        && given.params.len() == params.len()
        && given
            .params
            .iter()
            .zip(&params)
            .all(|(a, b)| a.ty == b.ty && a.mode == b.mode);
    if !same {
        let expected = fmt_signature(&g.name, &params, &returns);
        let found = fmt_signature(&g.name, &given.params, &given.returns);
        diags.push(
            Diagnostic::error(
                "E0307",
                format!(
                    "`{}` does not have the signature of a custom derivative of `{}`",
                    g.name, src.name
                ),
                g.span,
            )
            .with_label(span, "required by this attribute")
            .with_note(format!("expected `{expected}`"))
            .with_note(format!("found    `{found}`")),
        );
        return;
    }
    let name = g.name.clone();
    let f = module.func_mut(id);
    let slot = match mode {
        AdMode::Reverse => &mut f.custom_reverse,
        AdMode::Forward => &mut f.custom_forward,
    };
    // Two custom derivatives of one mode: which one was meant?
    if let Some(first) = slot.as_ref() {
        let attr = match mode {
            AdMode::Reverse => "reverse_derivative",
            AdMode::Forward => "forward_derivative",
        };
        diags.push(Diagnostic::error(
            "E0306",
            format!("`{}` already has a `{attr}`, `{first}`", f.name),
            span,
        ));
        return;
    }
    *slot = Some(name);
}

fn collect_array_sites(stmts: &[Stmt], out: &mut Vec<(ScalarType, Span)>) {
    for s in stmts {
        match s {
            Stmt::ArrayDecl { ty, span, .. } => out.push((scalar_of(*ty), *span)),
            Stmt::If {
                then_branch,
                else_branch,
                ..
            } => {
                collect_array_sites(then_branch, out);
                if let Some(e) = else_branch {
                    collect_array_sites(e, out);
                }
            }
            Stmt::While { body, .. } | Stmt::Block(body) => collect_array_sites(body, out),
            Stmt::For {
                init, body, step, ..
            } => {
                for s in init.iter().chain(step.iter()) {
                    collect_array_sites(std::slice::from_ref(s.as_ref()), out);
                }
                collect_array_sites(body, out);
            }
            Stmt::Attributed { stmt, .. } => {
                collect_array_sites(std::slice::from_ref(stmt.as_ref()), out)
            }
            Stmt::Decl { .. }
            | Stmt::Destructure { .. }
            | Stmt::Assign { .. }
            | Stmt::IncDec { .. }
            | Stmt::Expr(_)
            | Stmt::Break(_)
            | Stmt::Continue(_)
            | Stmt::Return(..)
            | Stmt::Error => (),
        }
    }
}

/// Lowers one function's body, the variables its body never assigns in
/// no join (`fixed`); should a variable called fixed be written after all,
/// lowers it again with every variable in the joins (an internal error in
/// debug builds).
fn lower_function(
    globals: &Globals,
    diags: &mut Vec<Diagnostic>,
    func: Function,
    sig: &Signature,
    body: &[Stmt],
    span: Span,
) -> Function {
    let before = diags.len();
    let assigned = super::fixed::assigned_names(body, globals);
    let with = |diags: &mut Vec<Diagnostic>, assigned| {
        lower_function_with(globals, diags, func.clone(), sig, body, span, assigned)
    };
    match with(diags, Some(assigned)) {
        Ok(lowered) => lowered,
        Err(()) => {
            debug_assert!(false, "a variable `fixed` called fixed was written");
            diags.truncate(before);
            // Invariant: with `assigned` `None` no variable is fixed.
            with(diags, None).expect("no variable is fixed")
        }
    }
}

/// `lower_function` with the names of `assigned` (`None`: every name);
/// `Err` when a variable called fixed was written.
fn lower_function_with(
    globals: &Globals,
    diags: &mut Vec<Diagnostic>,
    mut func: Function,
    sig: &Signature,
    body: &[Stmt],
    span: Span,
    assigned: Option<std::collections::HashSet<String>>,
) -> Result<Function, ()> {
    let entry = func.dfg.make_block();
    func.layout.push(entry);
    let params: Vec<_> = func
        .params
        .iter()
        .map(|p| func.dfg.append_block_param(entry, p.ty))
        .collect();
    let mut cx = FnLowerer {
        globals,
        diags,
        func,
        ret: sig.ret.clone(),
        scopes: vec![Vec::new()],
        names: Default::default(),
        var_types: Vec::new(),
        var_values: Vec::new(),
        var_fixed: Vec::new(),
        assigned,
        fixed_written: false,
        live: Vec::new(),
        cur: entry,
        loops: Vec::new(),
        loop_checkpoint: None,
        array_sites: Vec::new(),
        span,
    };
    let mut sites = Vec::new();
    collect_array_sites(body, &mut sites);
    // A declaration at the body's top level runs once, outside every loop
    // and branch: each join sees its variable null on all its edges or the
    // new array on all.
    let top_level: std::collections::HashSet<Span> = body
        .iter()
        .filter_map(|s| match s {
            Stmt::ArrayDecl { span, .. } => Some(*span),
            _ => None,
        })
        .collect();
    for (elem, site_span) in sites {
        let null = cx.ins1(InstData::ArrayNull, Type::Array(elem));
        let var = cx.new_var(Type::Array(elem), null);
        cx.var_fixed[var] = top_level.contains(&site_span) && cx.assigned.is_some();
        cx.array_sites.push((var, site_span));
    }
    for (p, v) in sig.params.iter().zip(params) {
        let elem = scalar_of(p.ty);
        let binding = match (p.is_array, p.mode) {
            (true, mode) => Binding::Array {
                source: super::ArraySource::Param(v),
                elem,
                writable: mode != Mode::Value,
            },
            (false, Mode::Value) => {
                let var = cx.new_named_var(Type::Scalar(elem), v, &p.name.name);
                Binding::Local {
                    var,
                    ty: elem,
                    is_const: false,
                }
            }
            (false, Mode::Inout | Mode::Out) => Binding::Ref { value: v, ty: elem },
        };
        // Writes through `inout`/`out` parameters are what they are for.
        let tracked = match &binding {
            Binding::Local { .. } => true,
            Binding::Array { writable, .. } => !writable,
            _ => false,
        };
        cx.bind(
            &p.name.name,
            binding,
            tracked.then_some((p.name.span, "parameter")),
        );
    }
    cx.scopes.push(Vec::new());
    for s in body {
        cx.stmt(s);
    }
    // Falling off the end: fine for `void`; for others an error if reachable.
    cx.span = Span::new(span.end.saturating_sub(1) as usize, span.end as usize);
    let end_block = cx.cur;
    let zeros: Vec<_> = cx.ret.types().iter().map(|t| cx.zero(t.elem())).collect();
    cx.free_local_arrays();
    cx.terminate(InstData::Return { args: zeros });
    for scope in std::mem::take(&mut cx.scopes).into_iter().rev() {
        cx.warn_unread(scope);
    }
    if cx.fixed_written {
        return Err(());
    }
    let has_value = cx.ret != RetTy::Void;
    let mut func = cx.func;
    let reachable = adc_ir::dom::dominators(&func).0;
    if has_value && reaches_on_taken_edges(&func, end_block) {
        diags.push(Diagnostic::error(
            "E0108",
            format!(
                "function `{}` can reach its end without returning a value",
                func.name
            ),
            Span::new(span.end.saturating_sub(1) as usize, span.end as usize),
        ));
    }
    // By index: a scan of the reachable list per block was O(n^2) in the
    // number of blocks (thousands of nested `if`s).
    let mut is_reachable = vec![false; func.dfg.num_blocks()];
    for b in &reachable {
        is_reachable[b.index()] = true;
    }
    func.layout.retain(|b| is_reachable[b.index()]);
    Ok(func)
}

/// The values of the program's global constants, each evaluated as the
/// lowering does (one that does not evaluate, or is defined twice, is
/// diagnosed there): for what reads them before lowering, such as a
/// Jacobian's `width`.
pub(crate) fn const_values(items: &[Item]) -> BTreeMap<String, Constant> {
    let mut consts = BTreeMap::new();
    for item in items {
        if let Item::Const(c) = item {
            if let Some(v) = eval_const(&c.value, scalar_of(c.ty), &consts, &mut Vec::new()) {
                consts.entry(c.name.name.clone()).or_insert(v);
            }
        }
    }
    consts
}

/// Evaluates a global constant's initializer at compile time.
fn eval_const(
    e: &Expr,
    ty: ScalarType,
    consts: &BTreeMap<String, Constant>,
    diags: &mut Vec<Diagnostic>,
) -> Option<Constant> {
    let v = match const_value(e, consts) {
        Ok(v) => v,
        Err(d) => {
            diags.push(d);
            return None;
        }
    };
    // The implicit conversions of docs/language.md#types (what `FnLowerer::coerce` allows).
    let from = v.ty();
    let widening = from != ScalarType::Bool
        && ty != ScalarType::Bool
        && super::expr::rank(from) < super::expr::rank(ty);
    let literal_to_float = from == ScalarType::F64 && ty == ScalarType::F32 && is_float_literal(e);
    if from != ty && !widening && !literal_to_float {
        diags.push(Diagnostic::error(
            "E0110",
            format!("expected `{}`, found `{}`", type_name(ty), type_name(from)),
            e.span,
        ));
        return None;
    }
    Some(interp::convert(v, ty))
}

pub(crate) fn is_float_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Float(s) => !s.ends_with(['f', 'F']),
        ExprKind::Unary(UnOp::Neg, inner) => is_float_literal(inner),
        _ => false,
    }
}

fn const_value(e: &Expr, consts: &BTreeMap<String, Constant>) -> Result<Constant, Diagnostic> {
    let not_const = || {
        Diagnostic::error(
            "E0111",
            "a global constant's value must be a constant expression",
            e.span,
        )
    };
    Ok(match &e.kind {
        ExprKind::Int(i) => Constant::I64(*i),
        ExprKind::Float(s) => super::expr::float_literal(s, e.span)?,
        ExprKind::Bool(b) => Constant::Bool(*b),
        ExprKind::Var(name) => *consts.get(name).ok_or_else(|| {
            Diagnostic::error("E0112", format!("cannot find constant `{name}`"), e.span)
        })?,
        ExprKind::Unary(op, a) => match (op, const_value(a, consts)?) {
            (UnOp::Not, Constant::Bool(b)) => Constant::Bool(!b),
            (UnOp::Neg, Constant::Bool(_)) | (UnOp::Not, _) => return Err(not_const()),
            (UnOp::Neg, c) => interp::binary(BinaryOp::Sub, Constant::zero(c.ty()), c),
        },
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (const_value(a, consts)?, const_value(b, consts)?);
            if a.ty() == ScalarType::Bool || b.ty() == ScalarType::Bool {
                return Err(not_const());
            }
            // The same promotion and semantics as at run time.
            let t = if super::expr::rank(a.ty()) >= super::expr::rank(b.ty()) {
                a.ty()
            } else {
                b.ty()
            };
            let (a, b) = (interp::convert(a, t), interp::convert(b, t));
            let bop = match op {
                BinOp::Add => BinaryOp::Add,
                BinOp::Sub => BinaryOp::Sub,
                BinOp::Mul => BinaryOp::Mul,
                BinOp::Div if b != Constant::I64(0) => BinaryOp::Div,
                BinOp::Rem if t == ScalarType::I64 && b != Constant::I64(0) => BinaryOp::Rem,
                _ => return Err(not_const()),
            };
            interp::binary(bop, a, b)
        }
        ExprKind::Cast(t, a) => interp::convert(const_value(a, consts)?, scalar_of(*t)),
        _ => return Err(not_const()),
    })
}

/// Whether `target` is reachable from the entry when a branch on a constant
/// condition (`while (true)`) only takes the edge it would take, as C
/// compilers see it: a function whose only way out is a `return` inside
/// `while (true)` does not reach its end.
fn reaches_on_taken_edges(func: &adc_ir::Function, target: adc_ir::Block) -> bool {
    use adc_ir::{Constant, InstData, ValueDef};
    let Some(entry) = func.entry_block() else {
        return false;
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut work = vec![entry];
    while let Some(b) = work.pop() {
        if !seen.insert(b) {
            continue;
        }
        if b == target {
            return true;
        }
        let Some(t) = func.terminator(b) else {
            continue;
        };
        match func.dfg.inst(t) {
            InstData::Branch {
                cond,
                then_dest,
                else_dest,
            } => {
                let known = match func.dfg.value_def(*cond) {
                    ValueDef::Result(i, _) => match func.dfg.inst(i) {
                        InstData::Const {
                            value: Constant::Bool(v),
                        } => Some(*v),
                        _ => None,
                    },
                    _ => None,
                };
                match known {
                    Some(true) => work.push(then_dest.block),
                    Some(false) => work.push(else_dest.block),
                    None => work.extend([then_dest.block, else_dest.block]),
                }
            }
            _ => work.extend(func.successors(b)),
        }
    }
    false
}
