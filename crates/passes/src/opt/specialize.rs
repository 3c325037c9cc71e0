//! `specialize`: a call that stays a call, with constant integer or `bool`
//! arguments (or `double`s 0, 1 and -1: a derivative's seed, a sign),
//! calls a clone of its callee with those arguments made constants
//! inside, so that `const-fold` and `unroll` can finish its loops there
//! (and its strong zeros and tests of the seed): `mat_mult(4, 4, p, a, b, c)` of a 4x4 by 4xp product gets
//! `__adc_spec_mat_mult_n4_m4`, whose inner products of length 4 become
//! straight-line code. Generated derivatives are callees like any other
//! (`__adc_fwdcccdcd_mat_mult`, a vector-mode `__adc_fwd..._w8_...`): the
//! derivative passes make them before `opt` runs, and `inline` never
//! inlines them.
//!
//! The `opt` stage runs it on the whole module after `inline` (the calls
//! that stay calls are the ones it sees), in a few rounds (a clone's own
//! calls may get constant arguments), each clone then optimised like any
//! function; the late passes (`unroll`) see the clones with the others.
//!
//! Pattern: `call @f(.., c, ..)` where the argument `c` is a `const` of
//! type `i64` or `bool`, or an `f64` 0, 1 or -1, in the caller and `f`'s parameter is used in its
//! body; `f` has a body of at most `MAX_CALLEE_INSTS` instructions, is not
//! the caller, and its body has no tape instructions (`tape.push`,
//! `tape.pop`, `tape.read`, `defer.free`: split mode's halves stay as the
//! derivative passes paired them, and `adc tape` reports them by name).
//! One clone per callee and distinct constants, at most
//! `MAX_CLONES_PER_CALLEE` per callee and run, and `MAX_CLONES` clones and
//! `MAX_CLONED_INSTS` copied instructions per `Budget` (which the `opt`
//! stage's rounds share); a call whose constants would need one more
//! clone stays as it is.
//!
//! The clone: a copy of `f` named `__adc_spec_F_PARAMVALUE..` (a negative
//! value's `-` written `m`, a double's value followed by `f`), `static`,
//! without derivative request, custom derivative or `[checkpoint]`, with
//! the same signature (the call keeps its arguments); its entry block starts with a `const` per specialised
//! parameter, which every use of the parameter takes instead.
//!
//! Assumes: verified input; every derivative generated (no bodiless
//! request is cloned or called differently). Guarantees: verified output
//! with the same behaviour (a clone computes what its callee computes for
//! those arguments); returns the clones it added.

use crate::defs::use_counts;
use adc_ir::{Constant, FuncId, Function, InstData, Linkage, Module, Type, Value, ValueDef};
use std::collections::BTreeMap;

/// Callees larger than this are not cloned.
pub(crate) const MAX_CALLEE_INSTS: usize = 3000;
/// At most this many clones of one callee (distinct constants).
const MAX_CLONES_PER_CALLEE: usize = 4;
/// At most this many clones per `Budget`.
const MAX_CLONES: usize = 48;
/// At most this many instructions copied per `Budget`.
const MAX_CLONED_INSTS: usize = 24_000;

/// What the runs sharing it have cloned (the `opt` stage's rounds share
/// one: a recursive callee with constant arguments is cloned again in
/// each round).
#[derive(Default)]
pub struct Budget {
    clones: usize,
    insts: usize,
}

/// A clone's constants: (parameter index, value; `bool`s as 0 and 1,
/// `f64`s as their bits).
type Key = (FuncId, Vec<(usize, i64)>);

/// Specialises the calls in `callers` (every function with a body when
/// `None`); returns the clones added to `module`.
pub fn run(module: &mut Module, callers: Option<&[FuncId]>, budget: &mut Budget) -> Vec<FuncId> {
    let callers: Vec<FuncId> = match callers {
        Some(ids) => ids.to_vec(),
        None => module.func_ids().collect(),
    };
    let mut clones: BTreeMap<Key, FuncId> = BTreeMap::new();
    let mut per_callee: BTreeMap<FuncId, usize> = BTreeMap::new();
    let mut added = Vec::new();
    // Which parameters of a callee are used (decided once per callee;
    // `None`: the callee may not be cloned).
    let mut used: BTreeMap<FuncId, Option<Vec<bool>>> = BTreeMap::new();
    for caller in callers {
        let f = module.func(caller);
        let mut calls = Vec::new();
        for &b in &f.layout {
            for &i in &f.dfg.block(b).insts {
                if let InstData::Call { func: callee, args } = f.dfg.inst(i) {
                    if *callee != caller {
                        calls.push((i, *callee, args.clone()));
                    }
                }
            }
        }
        for (inst, callee, args) in calls {
            let params = used.entry(callee).or_insert_with(|| {
                cloneable(module, module.func(callee)).then(|| used_params(module.func(callee)))
            });
            let Some(params) = params else { continue };
            let consts: Vec<(usize, i64)> = args
                .iter()
                .enumerate()
                .filter(|(k, _)| params.get(*k).copied().unwrap_or(false))
                .filter_map(|(k, a)| Some((k, scalar_const(module.func(caller), *a)?)))
                .collect();
            if consts.is_empty() {
                continue;
            }
            let key = (callee, consts);
            let id = match clones.get(&key) {
                Some(id) => *id,
                None => {
                    let n = per_callee.entry(callee).or_default();
                    let size = size(module.func(callee));
                    if *n >= MAX_CLONES_PER_CALLEE
                        || budget.clones >= MAX_CLONES
                        || budget.insts + size > MAX_CLONED_INSTS
                    {
                        continue;
                    }
                    *n += 1;
                    budget.clones += 1;
                    budget.insts += size;
                    let id = module.push(clone(module, &key));
                    clones.insert(key, id);
                    added.push(id);
                    id
                }
            };
            if let InstData::Call { func, .. } = module.func_mut(caller).dfg.inst_mut(inst) {
                *func = id;
            }
        }
    }
    added
}

fn size(f: &Function) -> usize {
    f.layout.iter().map(|b| f.dfg.block(*b).insts.len()).sum()
}

/// Whether `f` may be cloned: the signature its callers see, a body of at most `MAX_CALLEE_INSTS`
/// instructions, none of them a tape instruction.
pub(crate) fn cloneable(module: &Module, f: &Function) -> bool {
    // Callers see a derivative's signature through its request (the
    // verifier's `callee_signature`); the clone, which has none, must
    // have the same.
    let same_signature = f.deriv.as_ref().is_none_or(|spec| {
        module.find(&spec.of).is_some_and(|src| {
            adc_ir::ad::spec_signature(module.func(src), spec)
                == (f.params.clone(), f.returns.clone())
        })
    });
    same_signature
        && !f.is_import()
        && !f.layout.is_empty()
        && size(f) <= MAX_CALLEE_INSTS
        && !crate::predicates::keeps_tape(f)
}

/// Per parameter: an `i64`, `bool` or `f64` the body uses.
fn used_params(f: &Function) -> Vec<bool> {
    let counts = use_counts(f);
    let Some(entry) = f.entry_block() else {
        return Vec::new();
    };
    f.dfg
        .block_params(entry)
        .iter()
        .map(|p| {
            matches!(f.dfg.value_type(*p), Type::I64 | Type::BOOL | Type::F64)
                && counts[p.index()] > 0
        })
        .collect()
}

/// The `i64` or `bool` constant `v` is (`bool`s as 0 and 1), or the bits
/// of the `f64` 0, 1 or -1 it is.
fn scalar_const(f: &Function, v: Value) -> Option<i64> {
    let ValueDef::Result(inst, 0) = f.dfg.value_def(v) else {
        return None;
    };
    match f.dfg.inst(inst) {
        InstData::Const {
            value: Constant::I64(c),
        } => Some(*c),
        InstData::Const {
            value: Constant::Bool(b),
        } => Some(i64::from(*b)),
        // A seed or a sign: what `const-fold` finishes (`mulz` by one,
        // comparisons with zero); other doubles would only multiply.
        InstData::Const {
            value: Constant::F64(x),
        } if [0.0, 1.0, -1.0].contains(x) => Some(x.to_bits() as i64),
        _ => None,
    }
}

/// A copy of the key's callee with its parameters constant.
fn clone(module: &Module, (callee, consts): &Key) -> Function {
    let src = module.func(*callee);
    let mut f = src.clone();
    let mut name = format!("__adc_spec_{}", src.name);
    for (k, c) in consts {
        let float = src.params[*k].ty == Type::F64;
        let value = if float {
            format!("{}f", f64::from_bits(*c as u64))
        } else {
            c.to_string()
        };
        let value = value.replace('-', "m");
        name.push_str(&format!("_{}{value}", src.params[*k].name));
    }
    make_private_clone(module, &mut f, &name);
    let entry = f.layout[0];
    let params = f.dfg.block_params(entry).to_vec();
    let mut map = BTreeMap::new();
    let mut consts_first = Vec::new();
    for (k, c) in consts {
        let p = params[*k];
        let ty = f.dfg.value_type(p);
        let value = if ty == Type::BOOL {
            Constant::Bool(*c != 0)
        } else if ty == Type::F64 {
            Constant::F64(f64::from_bits(*c as u64))
        } else {
            Constant::I64(*c)
        };
        let inst = f.dfg.make_inst(InstData::Const { value }, &[ty]);
        f.set_span(inst, adc_ir::Span::UNDEFINED);
        consts_first.push(inst);
        map.insert(p, f.dfg.inst_results(inst)[0]);
    }
    crate::rewrite::substitute(&mut f, &map);
    let insts = &mut f.dfg.block_mut(entry).insts;
    insts.splice(0..0, consts_first);
    f
}

/// Makes `f`, a copy of a callee, a clone of its own: `static`, named
/// `name` (with a number when another function of `module` has that name:
/// a clone of a callee whose name ends like another's parameters), and
/// `make_private`.
pub(crate) fn make_private_clone(module: &Module, f: &mut Function, name: &str) {
    let mut unique = name.to_string();
    let mut n = 1;
    while module.find(&unique).is_some() {
        unique = format!("{name}_{n}");
        n += 1;
    }
    f.name = unique;
    make_private(f);
}

/// Strips from `f`, a copy of a callee under a new name, what was the
/// callee's own: it becomes `static`, with no derivative request, custom
/// derivative, `[checkpoint]` or cold parameters (its parameters are not
/// the callee's: no promise carries over).
pub(crate) fn make_private(f: &mut Function) {
    f.linkage = Linkage::Static;
    f.deriv = None;
    f.custom_forward = None;
    f.custom_reverse = None;
    f.checkpoint = false;
    f.cold = Vec::new();
}
