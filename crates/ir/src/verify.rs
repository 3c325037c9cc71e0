//! The IR verifier: the trust boundary between producers and passes.
//!
//! Checks, collecting every error rather than stopping at the first:
//! - Structure: every layout block exists, appears once and ends in exactly
//!   one terminator; no branch targets the entry block; the entry block's
//!   parameters match the signature; a function and its callees exist.
//! - Types: operand and result types per opcode; calls and returns match
//!   signatures; branch arguments match the target's parameters.
//! - SSA: every operand is defined, and its definition dominates the use
//!   (checked in reachable blocks).

use crate::dom::DomTree;
use crate::entity::{Block, Inst, Value};
use crate::function::{Function, Module, ValueDef};
use crate::inst::{BinaryOp, CmpCond, InstData, LenCheckOf, MathFunc, UnaryOp};
use crate::types::{ScalarType, Type};
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub struct VerifierError {
    pub func: String,
    /// `block3`, `inst7` (with its text), or empty for the whole function.
    pub location: String,
    pub message: String,
}

impl fmt::Display for VerifierError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.location.is_empty() {
            write!(f, "@{}: {}", self.func, self.message)
        } else {
            write!(f, "@{}: {}: {}", self.func, self.location, self.message)
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct VerifierErrors(pub Vec<VerifierError>);

impl fmt::Display for VerifierErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in &self.0 {
            writeln!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for VerifierErrors {}

/// Verifies a whole module.
pub fn verify(module: &Module) -> Result<(), VerifierErrors> {
    let mut errors = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for func in &module.funcs {
        if !names.insert(func.name.as_str()) {
            errors.push(VerifierError {
                func: func.name.clone(),
                location: String::new(),
                message: "function defined twice".into(),
            });
        }
        let mut cx = FuncVerifier {
            module,
            func,
            errors: &mut errors,
        };
        cx.run();
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(VerifierErrors(errors))
    }
}

struct FuncVerifier<'a> {
    module: &'a Module,
    func: &'a Function,
    errors: &'a mut Vec<VerifierError>,
}

impl FuncVerifier<'_> {
    /// The signature callers see. A reverse derivative still being
    /// generated has its forward-mode signature until `transpose`, a
    /// vector-mode one its width-1 signature until `widen` (a dependency
    /// sweep its signature without the arena until `sets`); callers
    /// already use the final one.
    fn callee_signature(&self, callee: &Function) -> (Vec<crate::function::Param>, Vec<Type>) {
        if let Some(spec) = callee
            .deriv
            .as_ref()
            .filter(|d| d.mode == crate::ad::AdMode::Reverse || d.vector || d.sets)
        {
            if let Some(src) = self.module.find(&spec.of) {
                return crate::ad::spec_signature(self.module.func(src), spec);
            }
        }
        (callee.params.clone(), callee.returns.clone())
    }

    fn err(&mut self, location: String, message: String) {
        self.errors.push(VerifierError {
            func: self.func.name.clone(),
            location,
            message,
        });
    }

    fn inst_err(&mut self, inst: Inst, message: String) {
        let text = crate::print::fmt_inst_data(Some(self.module), self.func.dfg.inst(inst));
        self.err(format!("{inst} `{text}`"), message);
    }

    fn run(&mut self) {
        let func = self.func;
        // Imports, and derivatives the passes have not generated yet, have no body.
        if func.is_import() || (func.deriv.is_some() && func.layout.is_empty()) {
            return;
        }
        let Some(entry) = func.entry_block() else {
            self.err(String::new(), "function has no blocks".into());
            return;
        };
        let nb = func.dfg.num_blocks();
        let mut seen = vec![false; nb];
        for &b in &func.layout {
            if b.index() >= nb || seen[b.index()] {
                self.err(format!("{b}"), "block missing or laid out twice".into());
                return;
            }
            seen[b.index()] = true;
        }
        let entry_types: Vec<Type> = func
            .dfg
            .block_params(entry)
            .iter()
            .map(|v| func.dfg.value_type(*v))
            .collect();
        let sig_types: Vec<Type> = func.params.iter().map(|p| p.ty).collect();
        let pair_in_signature = sig_types
            .iter()
            .chain(&func.returns)
            .any(|t| matches!(t, Type::Pair(_)));
        if pair_in_signature {
            self.err(
                "signature".into(),
                "a signature cannot have a dpair (pairs stay inside derivative bodies)".into(),
            );
        }
        if entry_types != sig_types {
            self.err(
                format!("{entry}"),
                "entry block parameters do not match the signature".into(),
            );
        }
        for &b in &func.layout {
            let insts = &func.dfg.block(b).insts;
            if insts.is_empty() {
                self.err(format!("{b}"), "empty block".into());
                continue;
            }
            for (i, &inst) in insts.iter().enumerate() {
                let is_last = i + 1 == insts.len();
                let is_term = func.dfg.inst(inst).is_terminator();
                if is_last && !is_term {
                    self.err(format!("{b}"), "block does not end in a terminator".into());
                } else if !is_last && is_term {
                    self.inst_err(inst, "terminator in the middle of a block".into());
                }
                self.check_inst(inst, &seen, entry);
            }
        }
        if self.errors.is_empty() {
            self.check_dominance();
        }
    }

    fn ty(&self, v: Value) -> Type {
        self.func.dfg.value_type(v)
    }

    fn check_inst(&mut self, inst: Inst, in_layout: &[bool], entry: Block) {
        let dfg = &self.func.dfg;
        let data = dfg.inst(inst).clone();
        for v in data.args() {
            if !dfg.is_valid_value(v) {
                self.inst_err(inst, format!("use of undefined value `{v}`"));
                return;
            }
        }
        let results: Vec<Type> = dfg
            .inst_results(inst)
            .iter()
            .map(|v| dfg.value_type(*v))
            .collect();
        let expected = self.result_types(&data, &results);
        match expected {
            Err(msg) => self.inst_err(inst, msg),
            Ok(types) if types != results => {
                self.inst_err(
                    inst,
                    format!("result types {results:?} should be {types:?}"),
                );
            }
            Ok(_) => (),
        }
        self.check_successors(inst, &data, in_layout, entry);
    }

    /// The result types an instruction should have, from its operands'
    /// (or the message saying why it has none): scalars, calls, control.
    fn result_types(&self, data: &InstData, results: &[Type]) -> Result<Vec<Type>, String> {
        let scalar = |t: Type| t.scalar();
        let numeric = |t: Type| matches!(t.scalar(), Some(s) if s != ScalarType::Bool);
        match data {
            InstData::Const { value } => Ok(vec![Type::Scalar(value.ty())]),
            InstData::Unary { op, arg } => {
                let t = self.ty(*arg);
                match op {
                    UnaryOp::Neg if numeric(t) => Ok(vec![t]),
                    UnaryOp::Not if t == Type::BOOL => Ok(vec![t]),
                    UnaryOp::NoDiff if scalar(t).is_some() => Ok(vec![t]),
                    _ => Err(format!("`{op}` does not apply to `{t}`")),
                }
            }
            InstData::Binary { op, args } => {
                let (a, b) = (self.ty(args[0]), self.ty(args[1]));
                if a != b {
                    Err(format!("operand types differ: `{a}` and `{b}`"))
                } else if !numeric(a)
                    || (matches!(op, BinaryOp::Rem | BinaryOp::Or) && a != Type::I64)
                    || (matches!(op, BinaryOp::MulZ | BinaryOp::DivZ) && !a.elem().is_float())
                {
                    Err(format!("`{op}` does not apply to `{a}`"))
                } else {
                    Ok(vec![a])
                }
            }
            InstData::Cmp { cond, args } => {
                let (a, b) = (self.ty(args[0]), self.ty(args[1]));
                let ordered = !matches!(cond, CmpCond::Eq | CmpCond::Ne);
                if a != b || scalar(a).is_none() || (ordered && !numeric(a)) {
                    Err(format!("cannot compare `{a}` with `{b}` by `{cond}`"))
                } else {
                    Ok(vec![Type::BOOL])
                }
            }
            InstData::Select { cond, args } => {
                let (a, b) = (self.ty(args[0]), self.ty(args[1]));
                if self.ty(*cond) != Type::BOOL || a != b || scalar(a).is_none() {
                    Err("select needs a `bool` condition and two scalars of one type".into())
                } else {
                    Ok(vec![a])
                }
            }
            InstData::Convert { arg } => match (
                scalar(self.ty(*arg)),
                results.first().and_then(|t| t.scalar()),
            ) {
                (Some(_), Some(to)) => Ok(vec![Type::Scalar(to)]),
                _ => Err("conv converts one scalar to another".into()),
            },
            InstData::Math { func, args } => {
                let t = args.first().map(|a| self.ty(*a));
                if args.len() != func.arity() || args.iter().any(|a| Some(self.ty(*a)) != t) {
                    Err(format!(
                        "`{func}` takes {} operands of one type",
                        func.arity()
                    ))
                } else {
                    match t.and_then(|t| t.scalar()) {
                        Some(s) if s.is_float() || (s.is_int() && *func == MathFunc::Abs) => {
                            Ok(vec![Type::Scalar(s)])
                        }
                        _ => Err(format!("`{func}` does not apply to these operands")),
                    }
                }
            }
            InstData::Call { func, args } => {
                if func.index() >= self.module.funcs.len() {
                    Err(format!("call of unknown function `{func}`"))
                } else {
                    let callee = self.module.func(*func);
                    let arg_types: Vec<Type> = args.iter().map(|a| self.ty(*a)).collect();
                    let (params, returns) = self.callee_signature(callee);
                    let param_types: Vec<Type> = params.iter().map(|p| p.ty).collect();
                    if arg_types != param_types {
                        Err(format!(
                            "arguments do not match the signature of `@{}`",
                            callee.name
                        ))
                    } else {
                        Ok(returns)
                    }
                }
            }
            InstData::Print { args } => {
                if args.iter().all(|a| scalar(self.ty(*a)).is_some()) {
                    Ok(vec![])
                } else {
                    Err("print takes scalars".into())
                }
            }
            InstData::Jump { .. } => Ok(vec![]),
            InstData::Branch { cond, .. } => {
                if self.ty(*cond) == Type::BOOL {
                    Ok(vec![])
                } else {
                    Err("branch condition must be `bool`".into())
                }
            }
            InstData::Return { args } => {
                let types: Vec<Type> = args.iter().map(|a| self.ty(*a)).collect();
                if types == self.func.returns {
                    Ok(vec![])
                } else {
                    Err("return values do not match the signature".into())
                }
            }
            _ => self.memory_result_types(data, results),
        }
    }

    /// `result_types` for arrays, references, copies, pairs and tapes.
    fn memory_result_types(&self, data: &InstData, results: &[Type]) -> Result<Vec<Type>, String> {
        match data {
            InstData::ArrayLen { array } => match self.ty(*array) {
                Type::Array(_) => Ok(vec![Type::I64]),
                t => Err(format!("`len` of `{t}`")),
            },
            InstData::Load { array, index, .. } => match (self.ty(*array), self.ty(*index)) {
                (Type::Array(e), Type::I64) => Ok(vec![Type::Scalar(e)]),
                _ => Err("load needs an array and an `i64` index".into()),
            },
            InstData::Store {
                array,
                index,
                value,
                ..
            } => match (self.ty(*array), self.ty(*index)) {
                (Type::Array(e), Type::I64) if self.ty(*value) == Type::Scalar(e) => Ok(vec![]),
                _ => Err(
                    "store needs an array, an `i64` index and a value of the element type".into(),
                ),
            },
            InstData::ArrayNew { len, .. } => match results.first() {
                Some(Type::Array(e)) if self.ty(*len) == Type::I64 => Ok(vec![Type::Array(*e)]),
                _ => Err("new needs an `i64` length and an array result".into()),
            },
            InstData::ArrayFree { array } => match self.ty(*array) {
                Type::Array(_) => Ok(vec![]),
                t => Err(format!("cannot free `{t}`")),
            },
            InstData::ArrayNull => match results.first() {
                Some(Type::Array(e)) => Ok(vec![Type::Array(*e)]),
                _ => Err("null makes an array".into()),
            },
            InstData::ElemRef { array, index } => match (self.ty(*array), self.ty(*index)) {
                (Type::Array(e), Type::I64) => Ok(vec![Type::Ref(e)]),
                _ => Err("elemref needs an array and an `i64` index".into()),
            },
            InstData::RefLoad { ptr } => match self.ty(*ptr) {
                Type::Ref(e) => Ok(vec![Type::Scalar(e)]),
                t => Err(format!("rload of `{t}`")),
            },
            InstData::RefStore { ptr, value } => match self.ty(*ptr) {
                Type::Ref(e) if self.ty(*value) == Type::Scalar(e) => Ok(vec![]),
                _ => Err("rstore needs a reference and a value of its type".into()),
            },
            InstData::Slot => match results.first() {
                Some(Type::Ref(e)) => Ok(vec![Type::Ref(*e)]),
                _ => Err("slot makes a reference".into()),
            },
            InstData::ArrayCopy { array } => match self.ty(*array) {
                Type::Array(e) => Ok(vec![Type::Array(e)]),
                t => Err(format!("cannot copy `{t}`")),
            },
            InstData::ArrayView { array, lo, hi } => {
                match (self.ty(*array), self.ty(*lo), self.ty(*hi)) {
                    (Type::Array(e), Type::I64, Type::I64) => Ok(vec![Type::Array(e)]),
                    _ => Err("view needs an array and two `i64` bounds".into()),
                }
            }
            InstData::AliasCheck { args } => match (self.ty(args[0]), self.ty(args[1])) {
                (Type::Array(_), Type::Array(_)) => Ok(vec![]),
                _ => Err("aliascheck compares two arrays".into()),
            },
            InstData::LenCheck { args, what } => match (self.ty(args[0]), self.ty(args[1])) {
                (Type::I64, Type::Array(_)) => Ok(vec![]),
                (Type::Array(_), Type::Array(_))
                    if !what.at_least() && *what != LenCheckOf::Index =>
                {
                    Ok(vec![])
                }
                _ => Err("lencheck compares an array with an array or an `i64` length".into()),
            },
            InstData::DeferFree { array } => match self.ty(*array) {
                Type::Array(_) => Ok(vec![]),
                t => Err(format!("cannot free `{t}`")),
            },
            InstData::CopyRange {
                dst,
                dst_index,
                src,
                src_index,
                count,
            } => match (self.ty(*dst), self.ty(*src)) {
                (Type::Array(a), Type::Array(b))
                    if a == b
                        && [dst_index, src_index, count]
                            .iter()
                            .all(|v| self.ty(**v) == Type::I64) =>
                {
                    Ok(vec![])
                }
                _ => {
                    Err("copyrange needs two arrays of one type and `i64` indices and count".into())
                }
            },
            InstData::PairMake { args } => match (self.ty(args[0]), self.ty(args[1])) {
                (Type::Scalar(a), Type::Scalar(b)) if a == b && a.is_float() => {
                    Ok(vec![Type::Pair(a)])
                }
                (a, b) => Err(format!("dpair.make of `{a}` and `{b}`")),
            },
            InstData::PairPrimal { pair } | InstData::PairDiff { pair } => match self.ty(*pair) {
                Type::Pair(e) => Ok(vec![Type::Scalar(e)]),
                t => Err(format!("`{t}` is not a dpair")),
            },
            InstData::TapePush { value, .. } if matches!(self.ty(*value), Type::Pair(_)) => {
                Err("a dpair cannot go on the tape".into())
            }
            InstData::TapePush { .. } => Ok(vec![]),
            InstData::LoopCheckpoint { .. } => Ok(vec![]),
            InstData::TapeLend => Ok(vec![Type::I64]),
            InstData::TapeReclaim { handle }
            | InstData::TapeAdopt { handle }
            | InstData::TapeGive { handle } => match self.ty(*handle) {
                Type::I64 => Ok(vec![]),
                t => Err(format!("a tape handle is an i64, not {t}")),
            },
            InstData::TapePop { .. } | InstData::TapeRead { .. } => match results {
                [t] => Ok(vec![*t]),
                _ => Err("a tape read has one result".into()),
            },
            _ => Err("an instruction without a type rule".into()),
        }
    }

    /// Each successor is in the layout, not the entry block, and gets
    /// arguments of its parameters' types.
    fn check_successors(&mut self, inst: Inst, data: &InstData, in_layout: &[bool], entry: Block) {
        for call in data.successors() {
            if call.block.index() >= in_layout.len() || !in_layout[call.block.index()] {
                self.inst_err(
                    inst,
                    format!("branch to `{}`, which is not in the layout", call.block),
                );
                continue;
            }
            if call.block == entry {
                self.inst_err(inst, "branch to the entry block".into());
            }
            let params = self.func.dfg.block_params(call.block);
            let ok = params.len() == call.args.len()
                && params
                    .iter()
                    .zip(&call.args)
                    .all(|(p, a)| self.ty(*p) == self.ty(*a));
            if !ok {
                self.inst_err(
                    inst,
                    format!("arguments do not match the parameters of `{}`", call.block),
                );
            }
        }
    }

    fn check_dominance(&mut self) {
        let func = self.func;
        let dom = DomTree::new(func);
        let mut position = vec![usize::MAX; func.dfg.num_insts()];
        let mut block_of = vec![None; func.dfg.num_insts()];
        for &b in &func.layout {
            for (i, &inst) in func.dfg.block(b).insts.iter().enumerate() {
                position[inst.index()] = i;
                block_of[inst.index()] = Some(b);
            }
        }
        for &b in &dom.rpo {
            for (i, &inst) in func.dfg.block(b).insts.iter().enumerate() {
                for v in func.dfg.inst(inst).args() {
                    let ok = match func.dfg.value_def(v) {
                        ValueDef::Param(db, _) => dom.dominates(db, b),
                        ValueDef::Result(di, _) => match block_of[di.index()] {
                            Some(db) if db == b => position[di.index()] < i,
                            Some(db) => dom.dominates(db, b),
                            None => false,
                        },
                        ValueDef::Unused => false,
                    };
                    if !ok {
                        self.inst_err(
                            inst,
                            format!("use of `{v}` is not dominated by its definition"),
                        );
                    }
                }
            }
        }
    }
}
