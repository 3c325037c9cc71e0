//! `expand_copies`: `c = copy a` becomes `c = new len(a)` and a loop of
//! element copies, in the copy of a function a reverse derivative is
//! generated from.
//!
//! Only derivative code holds `copy` (the argument snapshots `unzip` takes
//! for calls), so this matters for reverse over reverse. As one
//! instruction, a copy's shadow would be a copy of the source's shadow, a
//! primal operation through which no adjoint flows back; as a loop, every
//! element's adjoint goes back to the source's element like any load and
//! store. Assumes and guarantees verified IR with the same behaviour.

use adc_ir::{BinaryOp, BlockCall, CmpCond, Constant, Function, InstData, Span, Tag, Type};

use crate::rewrite::Emitter;

/// Expands every `copy` of `func`; whether there was one.
pub fn run(func: &mut Function) -> bool {
    let mut changed = false;
    loop {
        let found = func.layout.iter().enumerate().find_map(|(pos, &b)| {
            let insts = &func.dfg.block(b).insts;
            insts
                .iter()
                .position(|i| matches!(func.dfg.inst(*i), InstData::ArrayCopy { .. }))
                .map(|k| (pos, b, k))
        });
        let Some((pos, b, k)) = found else {
            return changed;
        };
        changed = true;
        let insts = func.dfg.block(b).insts.clone();
        let copy = insts[k];
        let InstData::ArrayCopy { array } = *func.dfg.inst(copy) else {
            unreachable!("found above")
        };
        let result = func.dfg.inst_results(copy)[0];
        let ty = func.dfg.value_type(result);
        let elem = Type::Scalar(ty.elem());
        let span: Span = func.span(copy);
        let (head, body, tail) = (
            func.dfg.make_block(),
            func.dfg.make_block(),
            func.dfg.make_block(),
        );
        func.layout.splice(pos + 1..pos + 1, [head, body, tail]);
        func.dfg.block_mut(tail).insts = insts[k + 1..].to_vec();
        func.dfg.block_mut(b).insts.truncate(k);
        let at = |block| Emitter {
            block,
            tag: Tag::Primal,
            span,
        };
        // b: the new array (the copy's own result), then the loop.
        let e = at(b);
        let len = e.value(func, InstData::ArrayLen { array }, Type::I64);
        let new = func
            .dfg
            .make_inst_with_results(InstData::ArrayNew { len, zeroed: true }, vec![result]);
        func.set_span(new, span);
        func.dfg.block_mut(b).insts.push(new);
        let zero = e.constant(func, Constant::I64(0));
        let to_head = |arg| InstData::Jump {
            dest: BlockCall {
                block: head,
                args: vec![arg],
            },
        };
        e.inst(func, to_head(zero), None);
        // head(i): i < len ? body : tail
        let i = func.dfg.append_block_param(head, Type::I64);
        let h = at(head);
        let more = h.value(
            func,
            InstData::Cmp {
                cond: CmpCond::Lt,
                args: [i, len],
            },
            Type::BOOL,
        );
        let br = InstData::Branch {
            cond: more,
            then_dest: BlockCall {
                block: body,
                args: vec![],
            },
            else_dest: BlockCall {
                block: tail,
                args: vec![],
            },
        };
        h.inst(func, br, None);
        // body: c[i] = a[i]; i + 1
        let d = at(body);
        let v = d.value(
            func,
            InstData::Load {
                array,
                index: i,
                checked: true,
            },
            elem,
        );
        d.inst(
            func,
            InstData::Store {
                array: result,
                index: i,
                value: v,
                checked: true,
            },
            None,
        );
        let one = d.constant(func, Constant::I64(1));
        let next = d.value(
            func,
            InstData::Binary {
                op: BinaryOp::Add,
                args: [i, one],
            },
            Type::I64,
        );
        d.inst(func, to_head(next), None);
    }
}
