//! One instruction's opcode and operands (`Parser::inst_data`).

use super::lex::Tok;
use super::{ParseError, Parser};
use crate::entity::FuncId;
use crate::inst::{BinaryOp, CmpCond, InstData, MathFunc, UnaryOp};
use crate::types::Type;

impl Parser<'_> {
    pub(super) fn inst_data(&mut self, result_types: &[Type]) -> Result<InstData, ParseError> {
        let word = self.word()?;
        let (op, tape) = split_tape_level(&word);
        let data = match op.as_str() {
            "const" => InstData::Const {
                value: self.constant(result_types.first().copied())?,
            },
            "cmp" => {
                let c = self.word()?;
                let Some(cond) = CmpCond::from_name(&c) else {
                    err!(self, "unknown comparison `{c}`")
                };
                InstData::Cmp {
                    cond,
                    args: self.two()?,
                }
            }
            "select" => {
                let cond = self.value()?;
                self.expect(",")?;
                InstData::Select {
                    cond,
                    args: self.two()?,
                }
            }
            "conv" => InstData::Convert { arg: self.value()? },
            "math" => {
                let name = self.word()?;
                let Some(func) = MathFunc::from_name(&name) else {
                    err!(self, "unknown math function `{name}`")
                };
                InstData::Math {
                    func,
                    args: self.value_list()?,
                }
            }
            "call" => {
                let name = match self.next()? {
                    Tok::Global(g) => g,
                    t => err!(self, "expected `@name`, found {t}"),
                };
                let Some(idx) = self.names.iter().position(|n| *n == name) else {
                    err!(self, "unknown function `@{name}`")
                };
                self.expect("(")?;
                let args = self.value_list()?;
                self.expect(")")?;
                InstData::Call {
                    func: FuncId::new(idx),
                    args,
                }
            }
            "print" => InstData::Print {
                args: self.value_list()?,
            },
            "jump" => InstData::Jump {
                dest: self.block_call()?,
            },
            "br" => {
                let cond = self.value()?;
                self.expect(",")?;
                let then_dest = self.block_call()?;
                self.expect(",")?;
                InstData::Branch {
                    cond,
                    then_dest,
                    else_dest: self.block_call()?,
                }
            }
            "return" => InstData::Return {
                args: self.value_list()?,
            },
            _ => self.array_inst_data(&op, tape)?,
        };
        Ok(data)
    }

    /// Arrays, references and copies between them.
    fn array_inst_data(&mut self, op: &str, tape: u8) -> Result<InstData, ParseError> {
        Ok(match op {
            "len" => InstData::ArrayLen {
                array: self.value()?,
            },
            "view" => {
                let [array, lo] = self.two()?;
                self.expect(",")?;
                InstData::ArrayView {
                    array,
                    lo,
                    hi: self.value()?,
                }
            }
            "aliascheck" => InstData::AliasCheck { args: self.two()? },
            "load" | "load.unchecked" => {
                let [array, index] = self.two()?;
                InstData::Load {
                    array,
                    index,
                    checked: op == "load",
                }
            }
            "store" | "store.unchecked" => {
                let [array, index] = self.two()?;
                self.expect(",")?;
                InstData::Store {
                    array,
                    index,
                    value: self.value()?,
                    checked: op == "store",
                }
            }
            "new" | "new.uninit" => InstData::ArrayNew {
                len: self.value()?,
                zeroed: op == "new",
            },
            "free" => InstData::ArrayFree {
                array: self.value()?,
            },
            "null" => InstData::ArrayNull,
            "elemref" => {
                let [array, index] = self.two()?;
                InstData::ElemRef { array, index }
            }
            "rload" => InstData::RefLoad { ptr: self.value()? },
            "rstore" => {
                let [ptr, value] = self.two()?;
                InstData::RefStore { ptr, value }
            }
            "slot" => InstData::Slot,
            _ if op.starts_with("lencheck") => {
                match crate::LenCheckOf::ALL
                    .into_iter()
                    .find(|w| w.opcode() == op)
                {
                    Some(what) => InstData::LenCheck {
                        args: self.two()?,
                        what,
                    },
                    None => self.derivative_inst_data(op, tape)?,
                }
            }
            "copy" => InstData::ArrayCopy {
                array: self.value()?,
            },
            "free.defer" => InstData::DeferFree {
                array: self.value()?,
            },
            "copyrange" => {
                let [dst, dst_index] = self.two()?;
                self.expect(",")?;
                let [src, src_index] = self.two()?;
                self.expect(",")?;
                InstData::CopyRange {
                    dst,
                    dst_index,
                    src,
                    src_index,
                    count: self.value()?,
                }
            }
            _ => self.derivative_inst_data(op, tape)?,
        })
    }

    /// Dual-number pairs, tapes and loop checkpoints; then the unary and
    /// binary operators, named by their opcodes.
    fn derivative_inst_data(&mut self, op: &str, tape: u8) -> Result<InstData, ParseError> {
        Ok(match op {
            "tape.push" => InstData::TapePush {
                value: self.value()?,
                tape,
            },
            "dpair.make" => InstData::PairMake { args: self.two()? },
            "dpair.primal" => InstData::PairPrimal {
                pair: self.value()?,
            },
            "dpair.diff" => InstData::PairDiff {
                pair: self.value()?,
            },
            "tape.pop" => InstData::TapePop { tape },
            "tape.read" => InstData::TapeRead { tape },
            "tape.lend" if tape == 0 => InstData::TapeLend,
            "tape.reclaim" if tape == 0 => InstData::TapeReclaim {
                handle: self.value()?,
            },
            "tape.adopt" if tape == 0 => InstData::TapeAdopt {
                handle: self.value()?,
            },
            "tape.give" if tape == 0 => InstData::TapeGive {
                handle: self.value()?,
            },
            "checkpoint.loop" => InstData::LoopCheckpoint {
                every: self.checkpoint_interval()?,
            },
            other => {
                if let Some(op) = UnaryOp::from_name(other) {
                    InstData::Unary {
                        op,
                        arg: self.value()?,
                    }
                } else if let Some(op) = BinaryOp::from_name(other) {
                    InstData::Binary {
                        op,
                        args: self.two()?,
                    }
                } else {
                    self.pos -= 1;
                    err!(self, "unknown instruction `{other}`")
                }
            }
        })
    }
}

/// `tapeN.op` -> (`tape.op`, N); any other opcode is itself, on tape 0.
fn split_tape_level(word: &str) -> (String, u8) {
    if let Some(rest) = word.strip_prefix("tape") {
        if let Some((digits, op)) = rest.split_once('.') {
            if !digits.is_empty() && !digits.starts_with('0') {
                if let Ok(n) = digits.parse::<u8>() {
                    return (format!("tape.{op}"), n);
                }
            }
        }
    }
    (word.to_string(), 0)
}
