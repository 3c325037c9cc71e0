//! `outline`'s two halves: the segment function's body, and the caller's
//! loop of segment calls.

use super::{zero_of, Interval, RewriteSite, SegmentBuilder};
use crate::ad::AdError;
use adc_ir::{
    BinaryOp, Block, BlockCall, CmpCond, Constant, Function, InstData, Type, Value, ValueDef,
};
use std::collections::BTreeMap;

/// Appends `data` to `b` and returns its results.
pub(super) fn emit(
    f: &mut Function,
    b: Block,
    data: InstData,
    types: &[Type],
    span: adc_ir::Span,
) -> Vec<Value> {
    let i = f.append_inst(b, data, types, span);
    f.dfg.inst_results(i).to_vec()
}

pub(super) fn int(f: &mut Function, b: Block, k: i64, span: adc_ir::Span) -> Value {
    emit(
        f,
        b,
        InstData::Const {
            value: Constant::I64(k),
        },
        &[Type::I64],
        span,
    )[0]
}

pub(super) fn jump(f: &mut Function, b: Block, to: Block, args: Vec<Value>, span: adc_ir::Span) {
    let data = InstData::Jump {
        dest: BlockCall { block: to, args },
    };
    f.append_inst(b, data, &[], span);
}

pub(super) fn branch(
    f: &mut Function,
    b: Block,
    cond: Value,
    then: BlockCall,
    other: BlockCall,
    span: adc_ir::Span,
) {
    let data = InstData::Branch {
        cond,
        then_dest: then,
        else_dest: other,
    };
    f.append_inst(b, data, &[], span);
}

pub(super) fn to(block: Block, args: Vec<Value>) -> BlockCall {
    BlockCall { block, args }
}

impl SegmentBuilder<'_> {
    /// Fills `s` (its signature made): entry, the counting header, the
    /// loop's blocks, and one returning block per way out.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn build(
        &self,
        s: &mut Function,
        state: &[Value],
        captures: &[Value],
        remade: &[Value],
        exits: &[(Block, usize, BlockCall)],
        exit_ret: &[Vec<Option<usize>>],
        live: &[Value],
        live_slot: usize,
    ) -> Result<(), AdError> {
        let g = self.g;
        let span = self.span;
        let ty = |v: &Value| g.dfg.value_type(*v);
        let mut map: BTreeMap<Value, Value> = BTreeMap::new();
        let entry = s.dfg.make_block();
        s.layout.push(entry);
        let entry_state: Vec<Value> = state
            .iter()
            .map(|v| s.dfg.append_block_param(entry, ty(v)))
            .collect();
        for v in captures {
            let p = s.dfg.append_block_param(entry, ty(v));
            map.insert(*v, p);
        }
        let iterations = s.dfg.append_block_param(entry, Type::I64);
        // Values made again from the passed ones, in order (see
        // `remade_captures`).
        for &v in remade {
            let adc_ir::ValueDef::Result(i, _) = g.dfg.value_def(v) else {
                unreachable!("remade values are instruction results");
            };
            let mut data = g.dfg.inst(i).clone();
            data.map_args(|a| map.get(&a).copied().unwrap_or(a));
            let made = emit(s, entry, data, &[ty(&v)], g.span(i))[0];
            map.insert(v, made);
        }
        // The counting header: stop before the iteration that would be
        // number `iterations + 1` of this segment.
        let hn = s.dfg.make_block();
        s.layout.push(hn);
        for v in state {
            let p = s.dfg.append_block_param(hn, ty(v));
            map.insert(*v, p);
        }
        let counter = s.dfg.append_block_param(hn, Type::I64);
        let zero = int(s, entry, 0, span);
        jump(
            s,
            entry,
            hn,
            entry_state.into_iter().chain([zero]).collect(),
            span,
        );
        let order: Vec<Block> = crate::cfg::dominator_order(g)
            .into_iter()
            .filter(|b| self.body.contains(b))
            .collect();
        let bmap: BTreeMap<Block, Block> = order.iter().map(|&b| (b, s.dfg.make_block())).collect();
        let layout_order: Vec<Block> = g
            .layout
            .iter()
            .copied()
            .filter(|b| self.body.contains(b))
            .collect();
        let done_block = s.dfg.make_block();
        s.layout.push(done_block);
        let done = emit(
            s,
            hn,
            InstData::Cmp {
                cond: CmpCond::Ge,
                args: [counter, iterations],
            },
            &[Type::BOOL],
            span,
        )[0];
        branch(
            s,
            hn,
            done,
            to(done_block, vec![]),
            to(bmap[&self.header], vec![]),
            span,
        );
        // Status 0: the state of the next header entry.
        let next_state: Vec<Value> = state.iter().map(|v| map[v]).collect();
        let mut rets = vec![int(s, done_block, 0, span)];
        rets.extend(next_state);
        for ty in s.returns.clone().into_iter().skip(rets.len()) {
            rets.push(zero_of(s, done_block, ty, span)?);
        }
        s.append_inst(done_block, InstData::Return { args: rets }, &[], span);
        for &b in &layout_order {
            s.layout.push(bmap[&b]);
        }
        for &b in &order {
            let nb = bmap[&b];
            if b != self.header {
                for &p in g.dfg.block_params(b) {
                    let np = s.dfg.append_block_param(nb, ty(&p));
                    map.insert(p, np);
                }
            }
            let insts = g.dfg.block(b).insts.clone();
            let (term, body_insts) = insts
                .split_last()
                .expect("invariant: verified blocks end in a terminator");
            for &i in body_insts {
                let mut data = g.dfg.inst(i).clone();
                data.map_args(|a| map.get(&a).copied().unwrap_or(a));
                let types: Vec<Type> = g
                    .dfg
                    .inst_results(i)
                    .iter()
                    .map(|r| g.dfg.value_type(*r))
                    .collect();
                let out = emit(s, nb, data, &types, g.span(i));
                for (r, o) in g.dfg.inst_results(i).iter().zip(out) {
                    map.insert(*r, o);
                }
            }
            let mut data = g.dfg.inst(*term).clone();
            data.map_args(|a| map.get(&a).copied().unwrap_or(a));
            let mut next_counter = None;
            for (k, call) in data.successors_mut().into_iter().enumerate() {
                if call.block == self.header {
                    let c = *next_counter.get_or_insert_with(|| {
                        let one = int(s, nb, 1, span);
                        emit(
                            s,
                            nb,
                            InstData::Binary {
                                op: BinaryOp::Add,
                                args: [counter, one],
                            },
                            &[Type::I64],
                            span,
                        )[0]
                    });
                    call.block = hn;
                    call.args.push(c);
                } else if let Some(&target) = bmap.get(&call.block) {
                    call.block = target;
                } else {
                    let e = exits
                        .iter()
                        .position(|(from, n, _)| *from == b && *n == k)
                        .expect("invariant: every edge out of the loop is an exit");
                    let xb = self.exit_block(s, e, exits, exit_ret, live, live_slot, b, &map)?;
                    call.block = xb;
                }
            }
            s.append_inst(nb, data, &[], g.span(*term));
        }
        Ok(())
    }

    /// The loop block holding `inst`.
    fn block_of(&self, inst: adc_ir::Inst) -> Block {
        *self
            .body
            .iter()
            .find(|b| self.g.dfg.block(**b).insts.contains(&inst))
            .expect("invariant: a live value is defined in the loop")
    }

    /// The block that returns for exit `e` from loop block `from`.
    #[allow(clippy::too_many_arguments)]
    fn exit_block(
        &self,
        s: &mut Function,
        e: usize,
        exits: &[(Block, usize, BlockCall)],
        exit_ret: &[Vec<Option<usize>>],
        live: &[Value],
        live_slot: usize,
        from: Block,
        map: &BTreeMap<Value, Value>,
    ) -> Result<Block, AdError> {
        let g = self.g;
        let span = self.span;
        let xb = s.dfg.make_block();
        s.layout.push(xb);
        let args: Vec<Value> = exits[e]
            .2
            .args
            .iter()
            .map(|a| s.dfg.append_block_param(xb, g.dfg.value_type(*a)))
            .collect();
        let returns = s.returns.clone();
        let mut rets = vec![int(s, xb, 1 + e as i64, span)];
        for (k, &ty) in returns.iter().enumerate().skip(1) {
            let v = if let Some(j) = exit_ret[e].iter().position(|r| *r == Some(k)) {
                args[j]
            } else if k >= live_slot {
                let v = live[k - live_slot];
                let def = match g.dfg.value_def(v) {
                    ValueDef::Param(b, _) => Some(b),
                    ValueDef::Result(i, _) => Some(self.block_of(i)),
                    ValueDef::Unused => None,
                };
                match (map.get(&v), def) {
                    (Some(&m), Some(def)) if self.dom.dominates(def, from) => m,
                    _ => zero_of(s, xb, ty, span)?,
                }
            } else {
                zero_of(s, xb, ty, span)?
            };
            rets.push(v);
        }
        s.append_inst(xb, InstData::Return { args: rets }, &[], span);
        Ok(xb)
    }
}

/// Appends `data` to `b` just before its terminator.
fn emit_before_terminator(
    f: &mut Function,
    b: Block,
    data: InstData,
    types: &[Type],
    span: adc_ir::Span,
) -> Value {
    let i = f.dfg.make_inst(data, types);
    f.set_span(i, span);
    let insts = &mut f.dfg.block_mut(b).insts;
    let at = insts.len().saturating_sub(1);
    insts.insert(at, i);
    f.dfg.inst_results(i)[0]
}

/// Replaces the loop in `g` by the loop of segment calls.
pub(super) fn rewrite_caller(g: &mut Function, site: RewriteSite<'_>) {
    let span = site.span;
    let ns = site.state.len();
    let hc = g.dfg.make_block();
    let hc_state: Vec<Value> = site
        .state
        .iter()
        .map(|v| {
            let ty = g.dfg.value_type(*v);
            g.dfg.append_block_param(hc, ty)
        })
        .collect();
    let len = match site.every {
        Interval::Fixed(_) => None,
        Interval::Growing { .. } => Some(g.dfg.append_block_param(hc, Type::I64)),
    };
    // Edges into the loop now enter the segment loop.
    for b in g.layout.clone() {
        if site.body.contains(&b) {
            continue;
        }
        let Some(t) = g.terminator(b) else { continue };
        let mut data = g.dfg.inst(t).clone();
        let enters = data.successors().iter().any(|c| c.block == site.header);
        if !enters {
            continue;
        }
        let first = match site.every {
            Interval::Growing { first, .. } => {
                let c = InstData::Const {
                    value: Constant::I64(first),
                };
                Some(emit_before_terminator(g, b, c, &[Type::I64], span))
            }
            Interval::Fixed(_) => None,
        };
        for call in data.successors_mut() {
            if call.block == site.header {
                call.block = hc;
                call.args.extend(first);
            }
        }
        *g.dfg.inst_mut(t) = data;
    }
    let iterations = match len {
        Some(l) => l,
        None => match site.every {
            Interval::Fixed(k) => int(g, hc, k, span),
            Interval::Growing { .. } => unreachable!("a growing interval has a length parameter"),
        },
    };
    let mut args = hc_state.clone();
    args.extend(site.captures);
    args.push(iterations);
    let results = emit(
        g,
        hc,
        InstData::Call {
            func: site.seg_id,
            args,
        },
        site.returns,
        span,
    );
    let status = results[0];
    let mut back: Vec<Value> = results[1..1 + ns].to_vec();
    if let (Interval::Growing { factor, .. }, Some(l)) = (site.every, len) {
        let f = int(g, hc, factor, span);
        back.push(
            emit(
                g,
                hc,
                InstData::Binary {
                    op: BinaryOp::Mul,
                    args: [l, f],
                },
                &[Type::I64],
                span,
            )[0],
        );
    }
    let exit_call = |e: usize| {
        let call = &site.exits[e].2;
        let args = call
            .args
            .iter()
            .zip(&site.exit_ret[e])
            .map(|(a, r)| r.map_or(*a, |k| results[k]))
            .collect();
        to(call.block, args)
    };
    let n = site.exits.len();
    if n == 0 {
        jump(g, hc, hc, back, span);
    } else {
        // Status 0: another segment; 1 + e: exit e.
        let zero = int(g, hc, 0, span);
        let again = emit(
            g,
            hc,
            InstData::Cmp {
                cond: CmpCond::Eq,
                args: [status, zero],
            },
            &[Type::BOOL],
            span,
        )[0];
        let mut cur = hc;
        let mut cond = again;
        let mut then = to(hc, back);
        for e in 0..n {
            if e + 1 == n {
                branch(g, cur, cond, then, exit_call(e), span);
                break;
            }
            let next = g.dfg.make_block();
            g.layout.push(next);
            branch(g, cur, cond, then, to(next, vec![]), span);
            cur = next;
            let k = int(g, cur, 1 + e as i64, span);
            cond = emit(
                g,
                cur,
                InstData::Cmp {
                    cond: CmpCond::Eq,
                    args: [status, k],
                },
                &[Type::BOOL],
                span,
            )[0];
            then = exit_call(e);
        }
    }
    let pos = g
        .layout
        .iter()
        .position(|b| *b == site.header)
        .expect("invariant: the header is in the layout");
    g.layout[pos] = hc;
    g.layout.retain(|b| !site.body.contains(b));
    let substitution: BTreeMap<Value, Value> = site
        .live
        .iter()
        .enumerate()
        .map(|(k, v)| (*v, results[site.live_slot + k]))
        .collect();
    crate::rewrite::substitute(g, &substitution);
}
