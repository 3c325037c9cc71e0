//! The shape `unzip` gives its input before splitting it: tapes moved a
//! level up, one exit block, and an exit block of its own for each counted
//! loop; and the check that every block reaches a `return`.

use crate::ad::AdError;
use crate::cfg::incoming_edges;
use adc_ir::dom::DomTree;
use adc_ir::{Block, BlockCall, Function, InstData, Tag, Value};
use std::collections::BTreeSet;

/// Moves every tape instruction of `g` to the next tape up.
pub(super) fn shift_tapes(g: &mut Function) -> Result<(), AdError> {
    for b in g.layout.clone() {
        for i in g.dfg.block(b).insts.clone() {
            let span = g.span(i);
            match g.dfg.inst_mut(i) {
                InstData::TapePush { tape, .. }
                | InstData::TapePop { tape }
                | InstData::TapeRead { tape } => {
                    *tape = tape.checked_add(1).ok_or_else(|| {
                        AdError::new("reverse derivatives nested more than 255 deep", span)
                    })?;
                }
                _ => (),
            }
        }
    }
    Ok(())
}

/// Every `return` becomes a jump to one new exit block.
/// The reverse sweep starts where the function returns and walks back:
/// a block that cannot reach a `return` (a loop that never exits) has no
/// way back, so its derivative cannot be generated. A diagnostic at the
/// loop (a user's program may mean it: forward mode runs it as the
/// primal does), not an internal error.
pub(super) fn every_block_returns(g: &Function) -> Result<(), AdError> {
    let edges = incoming_edges(g);
    let mut back: BTreeSet<Block> = BTreeSet::new();
    let mut stack: Vec<Block> = g
        .layout
        .iter()
        .copied()
        .filter(|b| {
            g.terminator(*b)
                .is_some_and(|t| matches!(g.dfg.inst(t), InstData::Return { .. }))
        })
        .collect();
    while let Some(b) = stack.pop() {
        if back.insert(b) {
            stack.extend(edges.get(&b).into_iter().flatten().map(|e| e.from));
        }
    }
    let dom = DomTree::new(g);
    let Some(stuck) = dom.rpo.iter().find(|b| !back.contains(b)) else {
        return Ok(());
    };
    let span = g
        .dfg
        .block(*stuck)
        .insts
        .iter()
        .map(|i| g.span(*i))
        .find(|s| s.is_defined())
        .unwrap_or(g.deriv_span);
    Err(AdError::new(
        "a reverse derivative cannot be generated through a loop that never exits (nothing after it \
         returns): the reverse sweep starts from a `return`",
        span,
    ))
}

pub(super) fn single_exit(g: &mut Function) {
    let exit = g.dfg.make_block();
    let params: Vec<Value> = g
        .returns
        .clone()
        .into_iter()
        .map(|t| g.dfg.append_block_param(exit, t))
        .collect();
    for b in g.layout.clone() {
        if let Some(t) = g.terminator(b) {
            if let InstData::Return { args } = g.dfg.inst(t).clone() {
                *g.dfg.inst_mut(t) = InstData::Jump {
                    dest: BlockCall { block: exit, args },
                };
            }
        }
    }
    g.layout.push(exit);
    let r = g.append_inst(
        exit,
        InstData::Return { args: params },
        &[],
        adc_ir::Span::UNDEFINED,
    );
    g.set_tag(r, Tag::Mixed);
}

/// Puts a new block on the edge from `header` to `exit`, so that the
/// loop's exit has a block of its own (where its counter is taped).
pub(super) fn split_exit(g: &mut Function, header: Block, exit: Block) {
    let x = g.dfg.make_block();
    let t = g
        .terminator(header)
        .expect("invariant: a counted loop's header branches");
    let tag = g.tag(t);
    let span = g.span(t);
    let mut args = Vec::new();
    for call in g.dfg.inst_mut(t).successors_mut() {
        if call.block == exit {
            call.block = x;
            args = std::mem::take(&mut call.args);
        }
    }
    let j = g.append_inst(
        x,
        InstData::Jump {
            dest: BlockCall { block: exit, args },
        },
        &[],
        span,
    );
    g.set_tag(j, tag);
    let pos = g
        .layout
        .iter()
        .position(|&b| b == header)
        .expect("invariant: the header is in the layout");
    g.layout.insert(pos + 1, x);
}

/// Moves every primal `slot` outside the entry block to the top of the
/// entry block, leaving a store of zero where it was. A slot is one piece
/// of the frame that each execution zeroes, so this changes nothing; but
/// the reference is then defined once per call and reaches the
/// differential part directly instead of through the tape. A stack
/// address on the tape would outlive its frame in split mode (the forward
/// half returns before the reverse half pops it: the shadow slot of an
/// `inout` scalar passed to a `[checkpoint]` function in a loop, written
/// by the reverse half into a dead frame); one defined at entry crosses
/// the turn as a live value, which `split::build` carries by content.
pub(super) fn hoist_slots(g: &mut Function) {
    let entry = g.layout[0];
    let mut hoisted = Vec::new();
    for b in g.layout[1..].to_vec() {
        for i in g.dfg.block(b).insts.clone() {
            if !matches!(g.dfg.inst(i), InstData::Slot) || g.tag(i) != Tag::Primal {
                continue;
            }
            let r = g.dfg.inst_results(i)[0];
            let e = g.dfg.value_type(r).elem();
            let span = g.span(i);
            // In its place: zero, as the slot held when it executed.
            let z = g.dfg.make_inst(
                InstData::Const {
                    value: adc_ir::Constant::zero(e),
                },
                &[adc_ir::Type::Scalar(e)],
            );
            let zv = g.dfg.inst_results(z)[0];
            let st = g
                .dfg
                .make_inst(InstData::RefStore { ptr: r, value: zv }, &[]);
            for x in [z, st] {
                g.set_span(x, span);
                g.set_tag(x, Tag::Primal);
            }
            let insts = &mut g.dfg.block_mut(b).insts;
            let at = insts
                .iter()
                .position(|x| *x == i)
                .expect("invariant: the slot is in its block");
            insts.splice(at..=at, [z, st]);
            hoisted.push(i);
        }
    }
    let insts = &mut g.dfg.block_mut(entry).insts;
    for (k, i) in hoisted.into_iter().enumerate() {
        insts.insert(k, i);
    }
}
