//! The textual IR printer: the only `Display` for `Function` and `Module`.
//!
//! The format is line based and round-trips through `crate::parse`:
//! `print(parse(print(m))) == print(m)` for every module.

use crate::ad::AdMode;
use crate::entity::Value;
use crate::function::{Function, Linkage, Module, Param, ParamMode};
use crate::inst::{BlockCall, InstData};
use std::fmt::{self, Write};

fn join(values: &[Value]) -> String {
    values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn fmt_call(call: &BlockCall) -> String {
    format!("{}({})", call.block, join(&call.args))
}

fn fmt_param(p: &Param) -> String {
    let mode = match p.mode {
        ParamMode::In => "",
        ParamMode::Inout => "inout ",
        ParamMode::Out => "out ",
    };
    format!("{mode}{}: {}", p.name, p.ty)
}

/// The operation part of an instruction (everything right of `=`).
pub fn fmt_inst_data(module: Option<&Module>, data: &InstData) -> String {
    match data {
        InstData::Const { value } => format!("const {value}"),
        InstData::Unary { op, arg } => format!("{op} {arg}"),
        InstData::Binary { op, args } => format!("{op} {}, {}", args[0], args[1]),
        InstData::Cmp { cond, args } => format!("cmp {cond} {}, {}", args[0], args[1]),
        InstData::Select { cond, args } => format!("select {cond}, {}, {}", args[0], args[1]),
        InstData::Convert { arg } => format!("conv {arg}"),
        InstData::Math { func, args } => format!("math {func} {}", join(args)),
        InstData::Call { func, args } => {
            let name = match module {
                Some(m) if func.index() < m.funcs.len() => m.func(*func).name.clone(),
                _ => format!("{func}"),
            };
            format!("call @{name}({})", join(args))
        }
        InstData::ArrayLen { array } => format!("len {array}"),
        InstData::ArrayView { array, lo, hi } => format!("view {array}, {lo}, {hi}"),
        InstData::AliasCheck { args } => format!("aliascheck {}, {}", args[0], args[1]),
        InstData::Load {
            array,
            index,
            checked,
        } => {
            format!(
                "load{} {array}, {index}",
                if *checked { "" } else { ".unchecked" }
            )
        }
        InstData::Store {
            array,
            index,
            value,
            checked,
        } => {
            format!(
                "store{} {array}, {index}, {value}",
                if *checked { "" } else { ".unchecked" }
            )
        }
        InstData::ArrayNew { len, zeroed } => {
            format!("new{} {len}", if *zeroed { "" } else { ".uninit" })
        }
        InstData::ArrayFree { array } => format!("free {array}"),
        InstData::ArrayNull => "null".into(),
        InstData::ElemRef { array, index } => format!("elemref {array}, {index}"),
        InstData::RefLoad { ptr } => format!("rload {ptr}"),
        InstData::RefStore { ptr, value } => format!("rstore {ptr}, {value}"),
        InstData::Slot => "slot".into(),
        InstData::ArrayCopy { array } => format!("copy {array}"),
        InstData::LenCheck { args, what } => format!("{} {}, {}", what.opcode(), args[0], args[1]),
        InstData::DeferFree { array } => format!("free.defer {array}"),
        InstData::TapePush { value, tape } => format!("{}.push {value}", tape_name(*tape)),
        InstData::CopyRange {
            dst,
            dst_index,
            src,
            src_index,
            count,
        } => format!("copyrange {dst}, {dst_index}, {src}, {src_index}, {count}"),
        InstData::PairMake { args } => format!("dpair.make {}, {}", args[0], args[1]),
        InstData::PairPrimal { pair } => format!("dpair.primal {pair}"),
        InstData::PairDiff { pair } => format!("dpair.diff {pair}"),
        InstData::TapePop { tape } => format!("{}.pop", tape_name(*tape)),
        InstData::TapeRead { tape } => format!("{}.read", tape_name(*tape)),
        InstData::TapeLend => "tape.lend".into(),
        InstData::TapeReclaim { handle } => format!("tape.reclaim {handle}"),
        InstData::TapeAdopt { handle } => format!("tape.adopt {handle}"),
        InstData::TapeGive { handle } => format!("tape.give {handle}"),
        InstData::LoopCheckpoint { every: 0 } => "checkpoint.loop auto".into(),
        InstData::LoopCheckpoint { every } => format!("checkpoint.loop {every}"),
        InstData::Print { args } => {
            if args.is_empty() {
                "print".into()
            } else {
                format!("print {}", join(args))
            }
        }
        InstData::Jump { dest } => format!("jump {}", fmt_call(dest)),
        InstData::Branch {
            cond,
            then_dest,
            else_dest,
        } => {
            format!(
                "br {cond}, {}, {}",
                fmt_call(then_dest),
                fmt_call(else_dest)
            )
        }
        InstData::Return { args } => {
            if args.is_empty() {
                "return".into()
            } else {
                format!("return {}", join(args))
            }
        }
    }
}

/// Prints one function; `module` resolves callee names.
pub fn write_function(out: &mut String, module: Option<&Module>, func: &Function) -> fmt::Result {
    let params = func
        .params
        .iter()
        .map(fmt_param)
        .collect::<Vec<_>>()
        .join(", ");
    let keyword = match func.linkage {
        Linkage::Export => "func",
        Linkage::Import => "extern",
        Linkage::Static => "static",
    };
    write!(out, "{keyword} @{}({params})", func.name)?;
    if !func.returns.is_empty() {
        let rets = func
            .returns
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        write!(out, " -> {rets}")?;
    }
    if let Some(g) = &func.custom_reverse {
        write!(out, " reverse_derivative @{g}")?;
    }
    if let Some(h) = &func.custom_forward {
        write!(out, " forward_derivative @{h}")?;
    }
    if func.checkpoint {
        write!(out, " checkpoint")?;
    }
    if !func.cold.is_empty() {
        let ps: Vec<String> = func.cold.iter().map(|p| p.to_string()).collect();
        write!(out, " cold({})", ps.join(", "))?;
    }
    if let Some(spec) = &func.deriv {
        let mode = match spec.mode {
            AdMode::Forward => "forward",
            AdMode::Reverse => "reverse",
        };
        let acts: Vec<String> = spec
            .params
            .iter()
            .chain(std::iter::once(&spec.ret))
            .map(|a| a.to_string())
            .collect();
        write!(out, " = {mode} @{}({})", spec.of, acts.join(", "))?;
        if spec.vector {
            write!(out, " width {}", spec.width)?;
        }
        if spec.sets {
            write!(out, " sets")?;
        }
        if spec.masks {
            write!(out, " masks")?;
        }
        if spec.interactions {
            write!(out, " interactions")?;
        }
    }
    if func.linkage == Linkage::Import || func.layout.is_empty() {
        return writeln!(out);
    }
    writeln!(out, " {{")?;
    for &block in &func.layout {
        let params = func
            .dfg
            .block_params(block)
            .iter()
            .map(|v| format!("{v}: {}", func.dfg.value_type(*v)))
            .collect::<Vec<_>>()
            .join(", ");
        writeln!(out, "{block}({params}):")?;
        for &inst in &func.dfg.block(block).insts {
            let results = func.dfg.inst_results(inst);
            out.push_str("    ");
            if !results.is_empty() {
                let lhs = results
                    .iter()
                    .map(|v| format!("{v}: {}", func.dfg.value_type(*v)))
                    .collect::<Vec<_>>()
                    .join(", ");
                write!(out, "{lhs} = ")?;
            }
            writeln!(
                out,
                "{}{}",
                func.tag(inst).prefix(),
                fmt_inst_data(module, func.dfg.inst(inst))
            )?;
        }
    }
    writeln!(out, "}}")
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        for (i, func) in self.funcs.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            write_function(&mut out, Some(self), func)?;
        }
        f.write_str(&out)
    }
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        write_function(&mut out, None, self)?;
        f.write_str(&out)
    }
}

/// `tape` for tape 0 (what every derivative tapes on), `tapeN` for the
/// tapes of nested reverse derivatives.
fn tape_name(tape: u8) -> String {
    match tape {
        0 => "tape".into(),
        n => format!("tape{n}"),
    }
}
