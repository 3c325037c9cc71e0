//! Split mode: a call that stays a call in a reverse derivative runs the
//! callee's augmented forward half, which keeps its tape for the caller's
//! reverse sweep, instead of the callee's primal now and its whole reverse
//! derivative (primal again, then reverse) later.
//!
//! For a callee `g` (`qualifies`) three functions are declared on demand,
//! as bodiless stubs until `g`'s internal reverse derivative `V =
//! __adc_vjp_g` is transposed:
//!
//! - `__adc_aug_g(V's parameters but the seeds.., tape) -> g's results`:
//!   `V`'s primal part (the forward sweep) on the caller's tape
//!   (`tape.adopt`); where it turns into the reverse sweep it pushes the
//!   values that sweep uses, gives the tape back (`tape.give`) and returns
//!   `g`'s results.
//! - `__adc_rev_g(V's parameters.., tape) -> V's results`: adopts the
//!   caller's tape, pops those values, runs `V`'s reverse sweep and gives
//!   the tape back.
//! - `__adc_lin_g` (`__adc_jvp_g`'s signature): what `unzip` writes in a
//!   caller's differential part in place of `__adc_jvp_g`, so `transpose`
//!   knows to call `__adc_rev_g`. No call of it survives `transpose`.
//!
//! The caller lends its tape for each call (`tape.lend`, the call,
//! `tape.reclaim`). The callee's values lie above the caller's earlier
//! ones and below those the caller pushes after the call (a block's values
//! go on the tape at its end, after its calls, and come off at the start
//! of its reverse, before them), so the reverse half finds them on top. One
//! tape for the whole derivative: recursion of depth `d` runs each level's
//! primal once, O(d) time and tape, and no call allocates. A callee's writable
//! arrays are not copied for the call: its reverse half reads only their
//! lengths (its loads from them are taped), which `build` checks. Arrays it
//! only reads are copied when the caller may change them later, as in joint
//! mode. A stack slot of the forward half that the reverse half uses
//! crosses the turn by content: the reverse half pops what it held into a
//! slot of its own. No stack address is ever on the tape (`build` refuses
//! one): the forward half's frame is gone when the reverse half runs.

use crate::ad::AdError;
use adc_ir::ad::{default_spec, spec_signature};
use adc_ir::{
    Activity, AdMode, Block, FuncId, Function, Inst, InstData, Linkage, Module, Param, ParamMode,
    Span, Tag, Type, Value, ValueDef,
};
use std::collections::{BTreeMap, BTreeSet};

/// Whether calls of `g` in reverse derivatives use split mode: a defined
/// function of the program that callers neither re-run on purpose
/// (`[checkpoint]`) nor replace (custom derivative).
pub fn qualifies(module: &Module, g: FuncId) -> bool {
    let f = module.func(g);
    !f.is_import()
        && !f.layout.is_empty()
        && !f.checkpoint
        && f.custom_reverse.is_none()
        && f.deriv.is_none()
        && !f.name.starts_with("__adc_")
}

/// Whether the module can use split mode at all: no derivative is taken of
/// a derivative or of code that calls one (nested derivatives keep joint
/// mode, whose derivatives are generated from ordinary functions only).
pub fn enabled(module: &Module) -> bool {
    let calls_derivative = |f: &Function| {
        f.layout.iter().any(|b| {
            f.dfg.block(*b).insts.iter().any(|i| match f.dfg.inst(*i) {
                InstData::Call { func, .. } => {
                    let c = module.func(*func);
                    c.deriv.is_some() || c.custom_forward.is_some() || c.custom_reverse.is_some()
                }
                _ => false,
            })
        })
    };
    // A derivative of a derivative (`adc run --grad` on a generated
    // function, a request or `.adir` declaration of one) is nested too:
    // its source has no body to search yet, but will call the split halves.
    let nested = |f: &Function| f.deriv.is_some() || calls_derivative(f);
    !module.funcs.iter().any(|f| {
        f.deriv
            .as_ref()
            .and_then(|d| module.find(&d.of))
            .is_some_and(|src| reaches(module, src, &nested))
    })
}

/// Whether `from` or a function it calls (transitively) satisfies `pred`.
fn reaches(module: &Module, from: FuncId, pred: &dyn Fn(&Function) -> bool) -> bool {
    let mut seen = BTreeSet::new();
    let mut work = vec![from];
    while let Some(id) = work.pop() {
        if !seen.insert(id) {
            continue;
        }
        let f = module.func(id);
        if pred(f) {
            return true;
        }
        for b in &f.layout {
            for i in &f.dfg.block(*b).insts {
                if let InstData::Call { func, .. } = f.dfg.inst(*i) {
                    work.push(*func);
                }
            }
        }
    }
    false
}

/// The three functions of `g`'s split mode.
#[derive(Clone, Copy, Debug)]
pub struct Split {
    pub lin: FuncId,
    pub aug: FuncId,
    pub rev: FuncId,
}

/// What a split function's body does until `build` fills it in.
enum Placeholder {
    /// Calls the function with the given parameters (by index) and
    /// returns its results: the same values the built body computes, so
    /// that IR dumped between `unzip` and `transpose` runs as the final
    /// IR does (the interpreter oracle of `tests/difftest` checks it).
    /// Exactly so for callees over scalars and arrays nobody writes: the
    /// `__adc_lin_` placeholder runs the callee's tangent function in the
    /// caller's differential part, after its whole primal part, on arrays
    /// as they are then (and writes them again); the built halves read
    /// the callee's values from the tape instead.
    Forward(FuncId, Vec<usize>),
    /// Returns zeros (`__adc_rev_`, which nothing calls before
    /// `transpose` builds it).
    Zeros,
}

/// Finds or declares a split function. Until `build` fills it (and for
/// `__adc_lin_`, for good: its calls do not survive `transpose`) its body
/// is `placeholder`, so every stage's output verifies and runs.
fn stub(
    module: &mut Module,
    name: String,
    params: Vec<Param>,
    returns: Vec<Type>,
    placeholder: Placeholder,
) -> FuncId {
    if let Some(id) = module.find(&name) {
        return id;
    }
    let mut f = Function::new(name, params, returns, Linkage::Export);
    let b = f.dfg.make_block();
    f.layout.push(b);
    for p in f.params.clone() {
        f.dfg.append_block_param(b, p.ty);
    }
    let rets = match placeholder {
        Placeholder::Forward(callee, indices) => {
            let args: Vec<Value> = indices.iter().map(|k| f.dfg.block_params(b)[*k]).collect();
            let i = f.append_inst(
                b,
                InstData::Call { func: callee, args },
                &f.returns.clone(),
                Span::UNDEFINED,
            );
            f.dfg.inst_results(i).to_vec()
        }
        Placeholder::Zeros => {
            let mut rets = Vec::new();
            for ty in f.returns.clone() {
                let data = match ty {
                    Type::Array(_) => InstData::ArrayNull,
                    t => InstData::Const {
                        value: adc_ir::Constant::zero(t.elem()),
                    },
                };
                let i = f.append_inst(b, data, &[ty], Span::UNDEFINED);
                rets.push(f.dfg.inst_results(i)[0]);
            }
            rets
        }
    };
    f.append_inst(b, InstData::Return { args: rets }, &[], Span::UNDEFINED);
    module.push(f)
}

fn handle_param() -> Param {
    Param {
        name: "tape".into(),
        ty: Type::I64,
        mode: ParamMode::In,
    }
}

/// Number of seed parameters at the end of `g`'s reverse signature.
fn seed_count(g: &Function) -> usize {
    let spec = default_spec(g, AdMode::Reverse);
    if matches!(spec.ret, Activity::Active | Activity::ActiveOnly) {
        g.returns.iter().filter(|t| t.elem().is_float()).count()
    } else {
        0
    }
}

/// Finds or declares `g`'s split functions; `jvp` is `__adc_jvp_g`.
pub fn declare(module: &mut Module, g: FuncId, jvp: FuncId) -> Split {
    let gf = module.func(g).clone();
    let (rparams, rreturns) = spec_signature(&gf, &default_spec(&gf, AdMode::Reverse));
    let seeds = seed_count(&gf);
    let j = module.func(jvp).clone();
    let lin = stub(
        module,
        format!("__adc_lin_{}", gf.name),
        j.params.clone(),
        j.returns.clone(),
        Placeholder::Forward(jvp, (0..j.params.len()).collect()),
    );
    let mut aparams = rparams[..rparams.len() - seeds].to_vec();
    aparams.push(handle_param());
    // `g`'s own parameters among the reverse signature's, which puts a
    // shadow after each `Duplicated` one.
    let mut primal_params = Vec::new();
    let mut k = 0;
    for a in &default_spec(&gf, AdMode::Reverse).params {
        primal_params.push(k);
        k += 1 + matches!(a, Activity::Duplicated | Activity::DuplicatedOnly) as usize;
    }
    let aug = stub(
        module,
        format!("__adc_aug_{}", gf.name),
        aparams,
        gf.returns.clone(),
        Placeholder::Forward(g, primal_params),
    );
    let mut vparams = rparams;
    vparams.push(handle_param());
    let rev = stub(
        module,
        format!("__adc_rev_{}", gf.name),
        vparams,
        rreturns,
        Placeholder::Zeros,
    );
    Split { lin, aug, rev }
}

/// The split functions of `g` if declared.
pub fn existing(module: &Module, g: &str) -> Option<Split> {
    Some(Split {
        lin: module.find(&format!("__adc_lin_{g}"))?,
        aug: module.find(&format!("__adc_aug_{g}"))?,
        rev: module.find(&format!("__adc_rev_{g}"))?,
    })
}

/// Where a transposed derivative turns from its forward to its reverse
/// sweep (`transpose` reports it).
pub struct Turn {
    /// The forward sweep's last block; it ends with the jump to `rev_entry`.
    pub exit: Block,
    pub rev_entry: Block,
    /// The forward sweep is `layout[..forward_blocks]`.
    pub forward_blocks: usize,
    /// The source function's results as forward-sweep values at `exit`.
    pub results: Vec<Value>,
}

mod build;
pub use build::build;

/// Whether `inst` is one of the forward sweep's adjoint-slot setups
/// (`transpose` puts them, tagged `diff`, at the top of the entry block).
fn is_slot_setup(v: &Function, inst: Inst) -> bool {
    v.tag(inst) == Tag::Diff
}

fn def_inst(v: &Function, x: Value) -> Option<Inst> {
    match v.dfg.value_def(x) {
        ValueDef::Result(i, _) => Some(i),
        _ => None,
    }
}

/// The error for a derivative that split mode cannot cut in two.
fn cannot(what: &str, span: Span) -> AdError {
    AdError::internal(format!("internal error: split mode: {what}"), span)
}

/// `BTreeMap` lookup that leaves unmapped values alone.
fn mapped(map: &BTreeMap<Value, Value>, v: Value) -> Value {
    map.get(&v).copied().unwrap_or(v)
}

/// The source function's results as forward-sweep values of `out` (the
/// transposed copy of `u`) at `exit`, the forward sweep's last block: what
/// `unzip`'s differential exit `dexit` returns is a forward-sweep value, a
/// tape read (its push's operand), or arithmetic recomputed from those
/// (computed again at `exit`, before its terminator).
pub fn forward_results(
    u: &Function,
    out: &mut Function,
    kinds: &[bool],
    dblocks: &[Block],
    exit: Block,
    dexit: Block,
) -> Result<Vec<Value>, AdError> {
    let span = u.deriv_span;
    // `unzip` lays the primal twins out in the same order, before.
    let twin_of: BTreeMap<Block, Block> = dblocks
        .iter()
        .copied()
        .zip(u.layout.iter().copied())
        .collect();
    let mut def_in: BTreeMap<Value, Block> = BTreeMap::new();
    for &b in dblocks {
        def_in.extend(u.dfg.block_params(b).iter().map(|p| (*p, b)));
        for &i in &u.dfg.block(b).insts {
            def_in.extend(u.dfg.inst_results(i).iter().map(|r| (*r, b)));
        }
    }
    let term = u.terminator(dexit).ok_or_else(|| cannot("no exit", span))?;
    let InstData::Return { args } = u.dfg.inst(term) else {
        return Err(cannot("the differential exit does not return", span));
    };
    let mut memo = BTreeMap::new();
    let mut results = Vec::new();
    for &a in args.iter().filter(|a| !kinds[a.index()]) {
        results.push(materialize(
            u, out, &def_in, &twin_of, exit, a, &mut memo, 0,
        )?);
    }
    Ok(results)
}

#[allow(clippy::too_many_arguments)]
fn materialize(
    u: &Function,
    out: &mut Function,
    def_in: &BTreeMap<Value, Block>,
    twin_of: &BTreeMap<Block, Block>,
    exit: Block,
    a: Value,
    memo: &mut BTreeMap<Value, Value>,
    depth: u32,
) -> Result<Value, AdError> {
    let span = u.deriv_span;
    if let Some(&m) = memo.get(&a) {
        return Ok(m);
    }
    let Some(&b) = def_in.get(&a) else {
        return Ok(a);
    };
    let i = def_inst(u, a)
        .ok_or_else(|| cannot("a result is a reverse-sweep block parameter", span))?;
    let value = match u.dfg.inst(i) {
        InstData::TapeRead { tape: 0 } => {
            let reads: Vec<Inst> = u
                .dfg
                .block(b)
                .insts
                .iter()
                .copied()
                .filter(|x| matches!(u.dfg.inst(*x), InstData::TapeRead { tape: 0 }))
                .collect();
            let pushes: Vec<Value> = u
                .dfg
                .block(twin_of[&b])
                .insts
                .iter()
                .filter_map(|x| match u.dfg.inst(*x) {
                    InstData::TapePush { value, tape: 0 } => Some(*value),
                    _ => None,
                })
                .collect();
            let k = reads
                .iter()
                .position(|x| *x == i)
                .expect("invariant: found among the block's reads");
            *pushes
                .get(k)
                .ok_or_else(|| cannot("tape reads and pushes do not pair up", span))?
        }
        data if u.tag(i) == Tag::Primal
            && (data.is_pure() || matches!(data, InstData::Load { .. }))
            && depth < 64 =>
        {
            let mut data = data.clone();
            let mut args = Vec::new();
            data.for_each_arg(|x| args.push(x));
            let mut done = BTreeMap::new();
            for x in args {
                let m = materialize(u, out, def_in, twin_of, exit, x, memo, depth + 1)?;
                done.insert(x, m);
            }
            data.map_args(|x| mapped(&done, x));
            let types: Vec<Type> = u
                .dfg
                .inst_results(i)
                .iter()
                .map(|r| u.dfg.value_type(*r))
                .collect();
            let ni = out.dfg.make_inst(data, &types);
            out.set_span(ni, u.span(i));
            let insts = &mut out.dfg.block_mut(exit).insts;
            let at = insts.len().saturating_sub(1);
            insts.insert(at, ni);
            out.dfg.inst_results(ni)[0]
        }
        _ => return Err(cannot("a result the forward sweep cannot compute", span)),
    };
    memo.insert(a, value);
    Ok(value)
}
