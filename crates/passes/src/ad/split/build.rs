//! Cutting a transposed reverse derivative in two at its turn.

use super::{cannot, def_inst, is_slot_setup, mapped, Split, Turn};
use crate::ad::AdError;
use adc_ir::ad::{default_spec, is_differentiable};
use adc_ir::{Activity, AdMode, Block, FuncId, Function, Inst, InstData, Module, Tag, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Fills `split`'s `aug` and `rev` from `v`, the transposed `__adc_vjp_g`.
pub fn build(
    module: &mut Module,
    g: FuncId,
    v: &Function,
    split: Split,
    turn: &Turn,
) -> Result<(), AdError> {
    let span = v.deriv_span;
    let fwd: Vec<Block> = v.layout[..turn.forward_blocks].to_vec();
    let back: Vec<Block> = v.layout[turn.forward_blocks..].to_vec();
    let entry = v.layout[0];
    let entry_params = v.dfg.block_params(entry).to_vec();
    // Forward-sweep definitions, and the adjoint-slot setups among them.
    let mut fdef: BTreeSet<Value> = BTreeSet::new();
    let mut setups: Vec<Inst> = Vec::new();
    for &b in &fwd {
        fdef.extend(v.dfg.block_params(b).iter().copied());
        for &i in &v.dfg.block(b).insts {
            fdef.extend(v.dfg.inst_results(i).iter().copied());
            if is_slot_setup(v, i) {
                if b != entry {
                    return Err(cannot(
                        "a differential instruction in the forward sweep",
                        span,
                    ));
                }
                setups.push(i);
            }
            if let InstData::TapePush { tape, .. } = v.dfg.inst(i) {
                if *tape > 0 {
                    return Err(cannot("a second tape", span));
                }
            }
        }
    }
    let setup_set: BTreeSet<Inst> = setups.iter().copied().collect();
    // What the reverse sweep uses of the forward sweep.
    let mut consts: Vec<Inst> = Vec::new();
    let mut live: Vec<Value> = Vec::new();
    let mut seen = BTreeSet::new();
    for &b in &back {
        for &i in &v.dfg.block(b).insts {
            v.dfg.inst(i).for_each_arg(|a| {
                if !fdef.contains(&a) || entry_params.contains(&a) || !seen.insert(a) {
                    return;
                }
                match def_inst(v, a) {
                    Some(d) if setup_set.contains(&d) => (),
                    Some(d) if matches!(v.dfg.inst(d), InstData::Const { .. }) => consts.push(d),
                    _ => live.push(a),
                }
            });
        }
    }
    // A reference to an array element (an `inout` scalar argument's
    // `elemref`) is made again in the reverse half from its array and
    // index, which cross the turn instead.
    let mut remat: Vec<Inst> = Vec::new();
    // A stack slot of the forward half (`unzip` defines them at entry)
    // dies with its frame: the reverse half gets a slot of its own,
    // holding what the forward half left in it (its content crosses).
    let mut slots: Vec<Value> = Vec::new();
    let mut k = 0;
    while k < live.len() {
        let r = live[k];
        if !matches!(v.dfg.value_type(r), Type::Ref(_)) {
            k += 1;
            continue;
        }
        if def_inst(v, r).is_some_and(|d| matches!(v.dfg.inst(d), InstData::Slot)) {
            live.remove(k);
            slots.push(r);
            continue;
        }
        let Some(d) = def_inst(v, r).filter(|d| matches!(v.dfg.inst(*d), InstData::ElemRef { .. }))
        else {
            return Err(cannot(&format!("reference {r} crosses the turn"), span));
        };
        live.remove(k);
        remat.push(d);
        v.dfg.inst(d).for_each_arg(|a| {
            if !fdef.contains(&a) || entry_params.contains(&a) || !seen.insert(a) {
                return;
            }
            match def_inst(v, a) {
                Some(c) if matches!(v.dfg.inst(c), InstData::Const { .. }) => consts.push(c),
                _ => live.push(a),
            }
        });
    }
    check_writable_params(module.func(g), v, &back, &entry_params, &remat)?;
    no_slot_on_tape(v, &fwd)?;
    let aug = forward_half(
        module.func(split.aug),
        v,
        &fwd,
        &setup_set,
        (&live, &slots),
        turn,
    )?;
    let rev = reverse_half(
        module.func(split.rev),
        v,
        &back,
        &setups,
        &consts,
        (&live, &remat, &slots),
        turn,
    );
    *module.func_mut(split.aug) = aug;
    *module.func_mut(split.rev) = rev;
    Ok(())
}

/// No stack slot of the forward half goes on the tape (`unzip` defines
/// every primal slot at entry, which the turn carries by content): the
/// reverse half, which pops it after the forward half has returned, would
/// read and write a dead frame. Refused here rather than miscompiled.
fn no_slot_on_tape(v: &Function, fwd: &[Block]) -> Result<(), AdError> {
    let edges = crate::cfg::incoming_edges(v);
    for &b in fwd {
        for &i in &v.dfg.block(b).insts {
            if let InstData::TapePush { value, .. } = v.dfg.inst(i) {
                if may_be_slot(v, &edges, *value, &mut BTreeSet::new()) {
                    return Err(cannot("a stack slot goes on the tape", v.span(i)));
                }
            }
        }
    }
    Ok(())
}

/// Whether reference `x` may be a stack slot: a `slot`, or a block
/// parameter or `select` that may receive one.
fn may_be_slot(
    v: &Function,
    edges: &BTreeMap<Block, Vec<crate::cfg::Edge>>,
    x: Value,
    seen: &mut BTreeSet<Value>,
) -> bool {
    if !matches!(v.dfg.value_type(x), Type::Ref(_)) || !seen.insert(x) {
        return false;
    }
    match v.dfg.value_def(x) {
        adc_ir::ValueDef::Result(i, _) => match v.dfg.inst(i) {
            InstData::Slot => true,
            InstData::Select { args, .. } => args.iter().any(|a| may_be_slot(v, edges, *a, seen)),
            _ => false,
        },
        adc_ir::ValueDef::Param(b, k) => edges.get(&b).into_iter().flatten().any(|e| {
            e.args
                .get(k as usize)
                .is_some_and(|a| may_be_slot(v, edges, *a, seen))
        }),
        adc_ir::ValueDef::Unused => false,
    }
}

/// The reverse half gets the caller's own arrays for the callee's writable
/// array parameters (they are not copied for the call), whose contents
/// have changed since: it may take their lengths and pass them on, nothing
/// else; nor may it make again (`remat`) a reference into one.
fn check_writable_params(
    g: &Function,
    v: &Function,
    back: &[Block],
    entry_params: &[Value],
    remat: &[Inst],
) -> Result<(), AdError> {
    let spec = default_spec(g, AdMode::Reverse);
    let mut k = 0;
    let mut watched = BTreeSet::new();
    for (p, act) in g.params.iter().zip(&spec.params) {
        if matches!(p.ty, Type::Array(_)) && p.mode != adc_ir::ParamMode::In {
            watched.insert(entry_params[k]);
        }
        k += 1;
        if is_differentiable(p.ty) && matches!(act, Activity::Duplicated | Activity::DuplicatedOnly)
        {
            k += 1;
        }
    }
    for &i in remat {
        if let InstData::ElemRef { array, .. } = v.dfg.inst(i) {
            if watched.contains(&v.array_root(*array)) {
                return Err(cannot(
                    "the reverse sweep refers to an element of a writable array parameter",
                    v.span(i),
                ));
            }
        }
    }
    for &b in back {
        for &i in &v.dfg.block(b).insts {
            let data = v.dfg.inst(i);
            // A view of a watched array is watched too.
            if let InstData::ArrayView { array, .. } = data {
                if watched.contains(array) {
                    watched.insert(v.dfg.inst_results(i)[0]);
                    continue;
                }
            }
            let allowed = matches!(
                data,
                InstData::ArrayLen { .. } | InstData::LenCheck { .. } | InstData::Call { .. }
            );
            let mut bad = false;
            data.for_each_arg(|a| bad |= watched.contains(&a) && !allowed);
            if bad {
                return Err(cannot(
                    "the reverse sweep reads a writable array parameter",
                    v.span(i),
                ));
            }
        }
    }
    Ok(())
}

/// Copies `blocks` of `v` into `out` (blocks made by `bmap`), instructions
/// through `vm`, skipping `skip`; the terminator of `stop` is left out.
fn copy_blocks(
    v: &Function,
    out: &mut Function,
    blocks: &[Block],
    bmap: &BTreeMap<Block, Block>,
    vm: &mut BTreeMap<Value, Value>,
    skip: &BTreeSet<Inst>,
    stop: Option<Block>,
) {
    let inside: BTreeSet<Block> = blocks.iter().copied().collect();
    for b in crate::cfg::dominator_order(v)
        .into_iter()
        .filter(|b| inside.contains(b))
    {
        let nb = bmap[&b];
        if b != v.layout[0] {
            for &p in v.dfg.block_params(b) {
                let np = out.dfg.append_block_param(nb, v.dfg.value_type(p));
                vm.insert(p, np);
            }
        }
        for &i in &v.dfg.block(b).insts {
            if skip.contains(&i) || (Some(b) == stop && v.dfg.inst(i).is_terminator()) {
                continue;
            }
            copy_entry_inst(v, out, nb, i, vm, Some(bmap));
        }
    }
}

fn forward_half(
    stub: &Function,
    v: &Function,
    fwd: &[Block],
    setups: &BTreeSet<Inst>,
    (live, slots): (&[Value], &[Value]),
    turn: &Turn,
) -> Result<Function, AdError> {
    let mut a = Function::new(
        stub.name.clone(),
        stub.params.clone(),
        stub.returns.clone(),
        stub.linkage,
    );
    let bmap: BTreeMap<Block, Block> = fwd.iter().map(|&b| (b, a.dfg.make_block())).collect();
    a.layout = fwd.iter().map(|b| bmap[b]).collect();
    let mut vm = BTreeMap::new();
    let entry = v.layout[0];
    let span = v.deriv_span;
    // V's parameters but the seeds, then the caller's tape.
    let (tape_param, own) = stub
        .params
        .split_last()
        .expect("invariant: the forward half takes the tape last");
    for (&p, param) in v.dfg.block_params(entry).iter().zip(own) {
        let np = a.dfg.append_block_param(bmap[&entry], param.ty);
        vm.insert(p, np);
    }
    let tape = a.dfg.append_block_param(bmap[&entry], tape_param.ty);
    a.append_inst(
        bmap[&entry],
        InstData::TapeAdopt { handle: tape },
        &[],
        span,
    );
    copy_blocks(v, &mut a, fwd, &bmap, &mut vm, setups, Some(turn.exit));
    let exit = bmap[&turn.exit];
    for &x in live {
        let data = InstData::TapePush {
            value: mapped(&vm, x),
            tape: 0,
        };
        a.append_inst(exit, data, &[], span);
    }
    for &x in slots {
        let e = v.dfg.value_type(x).elem();
        let ptr = mapped(&vm, x);
        let load = a.append_inst(exit, InstData::RefLoad { ptr }, &[Type::Scalar(e)], span);
        let value = a.dfg.inst_results(load)[0];
        a.append_inst(exit, InstData::TapePush { value, tape: 0 }, &[], span);
    }
    a.append_inst(exit, InstData::TapeGive { handle: tape }, &[], span);
    let rets: Vec<Value> = turn.results.iter().map(|r| mapped(&vm, *r)).collect();
    a.append_inst(exit, InstData::Return { args: rets }, &[], span);
    Ok(a)
}

/// Appends `v`'s instruction `i` to block `e` of `r`, its arguments and
/// results mapped by `vm` (and its successors by `bmap`, for a branch).
fn copy_entry_inst(
    v: &Function,
    r: &mut Function,
    e: Block,
    i: Inst,
    vm: &mut BTreeMap<Value, Value>,
    bmap: Option<&BTreeMap<Block, Block>>,
) {
    let mut data = v.dfg.inst(i).clone();
    data.map_args(|a| mapped(vm, a));
    if let Some(bmap) = bmap {
        for call in data.successors_mut() {
            call.block = bmap[&call.block];
        }
    }
    let types: Vec<Type> = v
        .dfg
        .inst_results(i)
        .iter()
        .map(|x| v.dfg.value_type(*x))
        .collect();
    let ni = r.append_inst(e, data, &types, v.span(i));
    r.set_tag(ni, v.tag(i));
    for (x, n) in v
        .dfg
        .inst_results(i)
        .iter()
        .zip(r.dfg.inst_results(ni).to_vec())
    {
        vm.insert(*x, n);
    }
}

fn reverse_half(
    stub: &Function,
    v: &Function,
    back: &[Block],
    setups: &[Inst],
    consts: &[Inst],
    (live, remat, slots): (&[Value], &[Inst], &[Value]),
    turn: &Turn,
) -> Function {
    let mut r = Function::new(
        stub.name.clone(),
        stub.params.clone(),
        stub.returns.clone(),
        stub.linkage,
    );
    let span = v.deriv_span;
    let e = r.dfg.make_block();
    let mut vm = BTreeMap::new();
    let entry = v.layout[0];
    let params: Vec<Value> = stub
        .params
        .iter()
        .map(|p| r.dfg.append_block_param(e, p.ty))
        .collect();
    for (&p, &np) in v.dfg.block_params(entry).iter().zip(&params) {
        vm.insert(p, np);
    }
    let tape = *params
        .last()
        .expect("invariant: the reverse half takes the tape last");
    r.append_inst(e, InstData::TapeAdopt { handle: tape }, &[], span);
    for &i in setups.iter().chain(consts) {
        copy_entry_inst(v, &mut r, e, i, &mut vm, None);
    }
    for &x in slots.iter().rev() {
        let ty = v.dfg.value_type(x);
        let pop = r.append_inst(
            e,
            InstData::TapePop { tape: 0 },
            &[Type::Scalar(ty.elem())],
            span,
        );
        let value = r.dfg.inst_results(pop)[0];
        let slot = r.append_inst(e, InstData::Slot, &[ty], span);
        let ptr = r.dfg.inst_results(slot)[0];
        r.append_inst(e, InstData::RefStore { ptr, value }, &[], span);
        vm.insert(x, ptr);
    }
    for &x in live.iter().rev() {
        let pop = r.append_inst(
            e,
            InstData::TapePop { tape: 0 },
            &[v.dfg.value_type(x)],
            span,
        );
        vm.insert(x, r.dfg.inst_results(pop)[0]);
    }
    for &i in remat {
        copy_entry_inst(v, &mut r, e, i, &mut vm, None);
    }
    let bmap: BTreeMap<Block, Block> = back.iter().map(|&b| (b, r.dfg.make_block())).collect();
    let jump = InstData::Jump {
        dest: adc_ir::BlockCall {
            block: bmap[&turn.rev_entry],
            args: vec![],
        },
    };
    r.append_inst(e, jump, &[], span);
    r.layout.push(e);
    r.layout.extend(back.iter().map(|b| bmap[b]));
    copy_blocks(v, &mut r, back, &bmap, &mut vm, &BTreeSet::new(), None);
    // The tape goes back to the caller before every return.
    for b in r.layout.clone() {
        let Some(t) = r.terminator(b) else { continue };
        if matches!(r.dfg.inst(t), InstData::Return { .. }) {
            let give = r.dfg.make_inst(InstData::TapeGive { handle: tape }, &[]);
            r.set_span(give, span);
            r.set_tag(give, Tag::Diff);
            let insts = &mut r.dfg.block_mut(b).insts;
            let at = insts.len() - 1;
            insts.insert(at, give);
        }
    }
    r
}
