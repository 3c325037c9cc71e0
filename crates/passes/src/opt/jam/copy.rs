//! The jammed copy of a loop `plan` found (the module comment of
//! `jam` says what it is).

use super::{body, counted_edge, Nest};
use crate::rewrite::copy_inst;
use adc_ir::{BinaryOp, Block, BlockCall, CmpCond, Constant, Function, InstData, Type, Value};
use std::collections::BTreeMap;

/// Appends instructions with one span and tag.
struct Emitter {
    span: adc_ir::Span,
    tag: adc_ir::Tag,
}

impl Emitter {
    fn value(&self, func: &mut Function, block: Block, data: InstData, ty: Type) -> Value {
        let inst = func.append_inst(block, data, &[ty], self.span);
        func.set_tag(inst, self.tag);
        func.dfg.inst_results(inst)[0]
    }

    fn int(&self, func: &mut Function, block: Block, c: i64) -> Value {
        let data = InstData::Const {
            value: Constant::I64(c),
        };
        self.value(func, block, data, Type::I64)
    }

    fn branch(&self, func: &mut Function, block: Block, data: InstData) {
        let inst = func.append_inst(block, data, &[], self.span);
        func.set_tag(inst, self.tag);
    }
}

/// New parameters of `block` of the types of `like`'s.
fn params_like(func: &mut Function, block: Block, like: &[Value]) -> Vec<Value> {
    like.iter()
        .map(|v| {
            let t = func.dfg.value_type(*v);
            func.dfg.append_block_param(block, t)
        })
        .collect()
}

fn copy_body(func: &mut Function, from: Block, to: Block, map: &mut BTreeMap<Value, Value>) {
    for inst in body(func, from).to_vec() {
        copy_inst(func, inst, to, map);
    }
}

/// Both iterations' values of `args` (a block's arguments): the first's,
/// then the second's but at `shared` (the inner counter, one for both).
fn lanes(args: &[Value], shared: usize, maps: [&BTreeMap<Value, Value>; 2]) -> Vec<Value> {
    let get = |m: &BTreeMap<Value, Value>, v: &Value| *m.get(v).unwrap_or(v);
    let mut all: Vec<Value> = args.iter().map(|v| get(maps[0], v)).collect();
    let second = args.iter().enumerate().filter(|(k, _)| *k != shared);
    all.extend(second.map(|(_, v)| get(maps[1], v)));
    all
}

/// `like`'s parameters twice over in `to` (but once at `shared`), entered
/// in `maps`: the first iteration's, then the second's.
fn lane_params(
    func: &mut Function,
    to: Block,
    like: Block,
    shared: Option<usize>,
    maps: [&mut BTreeMap<Value, Value>; 2],
) {
    let params = func.dfg.block_params(like).to_vec();
    let a = params_like(func, to, &params);
    let mut b = Vec::new();
    for (k, v) in params.iter().enumerate() {
        b.push(match shared == Some(k) {
            true => a[k],
            false => params_like(func, to, &[*v])[0],
        });
    }
    let [map_a, map_b] = maps;
    map_a.extend(params.iter().copied().zip(a));
    map_b.extend(params.iter().copied().zip(b));
}

/// `from`'s branch for both iterations, appended to `into`: the first's
/// condition; each edge retargeted by `target`, which also gives the
/// position of the inner counter among the new target's parameters (its
/// one argument for both), or `usize::MAX`.
fn lane_branch(
    func: &mut Function,
    em: &Emitter,
    (from, into): (Block, Block),
    target: &dyn Fn(Block) -> (Block, usize),
    maps: [&BTreeMap<Value, Value>; 2],
) {
    let term = func
        .terminator(from)
        .expect("invariant: plan() read its branch");
    let mut data = func.dfg.inst(term).clone();
    if let InstData::Branch { cond, .. } = &mut data {
        *cond = *maps[0].get(cond).unwrap_or(cond);
    }
    for call in data.successors_mut() {
        let (block, shared) = target(call.block);
        call.args = lanes(&call.args, shared, maps);
        call.block = block;
    }
    em.branch(func, into, data);
}

/// Copies of `blocks` (in reverse postorder) for one iteration: parameters
/// and instructions through `map`; edges among them to the copies, the
/// last block's terminator left to the caller. Returns the copies.
fn copy_region(
    func: &mut Function,
    blocks: &[Block],
    map: &mut BTreeMap<Value, Value>,
    entry_params: bool,
) -> Vec<Block> {
    let copies: Vec<Block> = blocks.iter().map(|_| func.dfg.make_block()).collect();
    let to_copy: BTreeMap<Block, Block> =
        blocks.iter().copied().zip(copies.iter().copied()).collect();
    for (k, (&from, &to)) in blocks.iter().zip(&copies).enumerate() {
        if k > 0 || entry_params {
            let params = func.dfg.block_params(from).to_vec();
            let new = params_like(func, to, &params);
            map.extend(params.into_iter().zip(new));
        }
        copy_body(func, from, to, map);
        if k + 1 < blocks.len() {
            let term = func
                .terminator(from)
                .expect("invariant: a block of the loop ends in a branch");
            let mut data = func.dfg.inst(term).clone();
            data.map_args(|a| *map.get(&a).unwrap_or(&a));
            for call in data.successors_mut() {
                call.block = to_copy[&call.block];
            }
            let (span, tag) = (func.span(term), func.tag(term));
            let inst = func.append_inst(to, data, &[], span);
            func.set_tag(inst, tag);
        }
    }
    copies
}

/// `P`: parameters like `O`'s, and whether two iterations are left,
/// `c < N - 1` (unless `N - 1` wraps); its branch is the caller's.
fn entry_test(
    func: &mut Function,
    em: &Emitter,
    n: &Nest,
    o_params: &[Value],
) -> (Block, Vec<Value>, Value) {
    let pre = func.dfg.make_block();
    let pre_params = params_like(func, pre, &o_params);
    let one = em.int(func, pre, 1);
    let sub = InstData::Binary {
        op: BinaryOp::Sub,
        args: [n.bound, one],
    };
    let limit = em.value(func, pre, sub, Type::I64);
    let less = |args| InstData::Cmp {
        cond: CmpCond::Lt,
        args,
    };
    let no_wrap = em.value(func, pre, less([limit, n.bound]), Type::BOOL);
    let room = em.value(func, pre, less([pre_params[n.counter], limit]), Type::BOOL);
    let no = InstData::Const {
        value: Constant::Bool(false),
    };
    let no = em.value(func, pre, no, Type::BOOL);
    let select = InstData::Select {
        cond: no_wrap,
        args: [room, no],
    };
    let two_left = em.value(func, pre, select, Type::BOOL);
    (pre, pre_params, two_left)
}

pub(super) fn jam(func: &mut Function, n: &Nest) {
    let (o, b, e) = (n.before[0], n.inner, n.after[0]);
    let latch = *n.after.last().expect("invariant: plan() found the latch");
    let jump_block = *n.before.last().expect("invariant: plan() found `J`");
    let l_term = func
        .terminator(latch)
        .expect("invariant: plan() read L's branch");
    let em = Emitter {
        span: func.span(l_term),
        tag: func.tag(l_term),
    };
    let o_params = func.dfg.block_params(o).to_vec();
    let (inner_counter, _) = counted_edge(func, b, b, b).expect("invariant: plan() found it");
    let first_new = func.dfg.num_blocks();
    let (pre, pre_params, two_left) = entry_test(func, &em, n, &o_params);
    let to = |block, args: Vec<Value>| BlockCall { block, args };
    // The blocks before `B`, for `c` then `c + 1`.
    let (mut map_a, mut map_b) = (BTreeMap::new(), BTreeMap::new());
    let before_a = copy_region(func, &n.before, &mut map_a, true);
    let before_b = copy_region(func, &n.before, &mut map_b, true);
    let enter = InstData::Branch {
        cond: two_left,
        then_dest: to(before_a[0], pre_params.clone()),
        else_dest: to(o, pre_params),
    };
    em.branch(func, pre, enter);
    let j_a = *before_a.last().expect("invariant: `J` is copied");
    let one = em.int(func, j_a, 1);
    let add = InstData::Binary {
        op: BinaryOp::Add,
        args: [map_a[&o_params[n.counter]], one],
    };
    let counter_b = em.value(func, j_a, add, Type::I64);
    let mut into_b: Vec<Value> = o_params.iter().map(|v| map_a[v]).collect();
    into_b[n.counter] = counter_b;
    em.branch(
        func,
        j_a,
        InstData::Jump {
            dest: to(before_b[0], into_b),
        },
    );
    // G2 and B2: `G` and `B` for both, one counter.
    let (guard, guard_counter) = n.guard.unwrap_or((b, inner_counter));
    let (g2, b2) = (func.dfg.make_block(), func.dfg.make_block());
    let after_a0 = func.dfg.make_block();
    let target = |x: Block| match x {
        _ if x == b => (b2, inner_counter),
        _ if x == e => (after_a0, usize::MAX),
        _ => (g2, guard_counter),
    };
    let j_b = *before_b.last().expect("invariant: `J` is copied");
    lane_branch(func, &em, (jump_block, j_b), &target, [&map_a, &map_b]);
    if n.guard.is_some() {
        lane_params(
            func,
            g2,
            guard,
            Some(guard_counter),
            [&mut map_a, &mut map_b],
        );
        copy_body(func, guard, g2, &mut map_a);
        copy_body(func, guard, g2, &mut map_b);
        lane_branch(func, &em, (guard, g2), &target, [&map_a, &map_b]);
    }
    lane_params(func, b2, b, Some(inner_counter), [&mut map_a, &mut map_b]);
    copy_body(func, b, b2, &mut map_a);
    copy_body(func, b, b2, &mut map_b);
    lane_branch(func, &em, (b, b2), &target, [&map_a, &map_b]);
    // The blocks after `B` for `c`: `E`'s copy takes both iterations'
    // arguments; its `L` enters the copy for `c + 1`, passing the second
    // iteration's and, for the outer state, the first's new one.
    lane_params(func, after_a0, e, None, [&mut map_a, &mut map_b]);
    let e_b_args: Vec<Value> = func.dfg.block_params(e).iter().map(|v| map_b[v]).collect();
    copy_body(func, e, after_a0, &mut map_a);
    let mut after_a = vec![after_a0];
    if n.after.len() > 1 {
        // (`E`'s own branch, to the next copies.)
        let rest = copy_region(func, &n.after[1..], &mut map_a, true);
        let term = func.terminator(e).expect("invariant: `E` ends in a branch");
        let mut data = func.dfg.inst(term).clone();
        data.map_args(|a| *map_a.get(&a).unwrap_or(&a));
        for call in data.successors_mut() {
            let k = n
                .after
                .iter()
                .position(|x| *x == call.block)
                .expect("invariant: `E` leads on in the loop");
            call.block = rest[k - 1];
        }
        em.branch(func, after_a0, data);
        after_a.extend(rest);
    }
    let back = func
        .dfg
        .inst(l_term)
        .successors()
        .into_iter()
        .find(|c| c.block == o)
        .expect("invariant: plan() found the back edge")
        .args
        .clone();
    for (k, v) in back.iter().enumerate() {
        map_b.insert(o_params[k], *map_a.get(v).unwrap_or(v));
    }
    let after_b = copy_region(func, &n.after, &mut map_b, true);
    let l_a = *after_a.last().expect("invariant: `L` is copied");
    em.branch(
        func,
        l_a,
        InstData::Jump {
            dest: to(after_b[0], e_b_args),
        },
    );
    let l_b = *after_b.last().expect("invariant: `L` is copied");
    let mut last = func.dfg.inst(l_term).clone();
    last.map_args(|a| *map_b.get(&a).unwrap_or(&a));
    em.branch(func, l_b, last);
    // Layout: the new blocks before `O`; every edge into `O` but `P`'s
    // (from outside, `L`'s and the second `L`'s) enters `P`.
    let pos = func
        .layout
        .iter()
        .position(|x| *x == o)
        .expect("invariant: the loop is laid out");
    let mut new: Vec<Block> = vec![pre];
    new.extend(&before_a);
    new.extend(&before_b);
    if n.guard.is_some() {
        new.push(g2);
    }
    new.push(b2);
    new.extend(&after_a);
    new.extend(&after_b);
    debug_assert!(new.iter().all(|x| x.index() >= first_new));
    func.layout.splice(pos..pos, new);
    for blk in func.layout.clone() {
        let Some(t) = func.terminator(blk).filter(|_| blk != pre) else {
            continue;
        };
        for call in func.dfg.inst_mut(t).successors_mut() {
            if call.block == o {
                call.block = pre;
            }
        }
    }
}
