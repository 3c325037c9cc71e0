//! The textual IR reader: a hand-written lexer and recursive-descent parser.
//!
//! It keeps the numbers written in the text (`v10` stays `v10`), resolves
//! callees by name in a first pass so calls may refer forward, and never
//! panics: every problem is a `ParseError` with a line and column.
//!
//! ```text
//! module   := item*
//! item     := ("func" | "extern" | "static") "@" name "(" params ")" ["->" types]
//!             [("reverse_derivative" | "forward_derivative") "@" name]*
//!             ["=" ("forward" | "reverse") "@" name "(" activities ")"] [body]
//! param    := ["inout" | "out"] name ":" type
//! type     := scalar | ("arr" | "ref" | "dpair") "<" scalar ">"
//! body     := "{" (block_header inst*)* "}"
//! block    := blockN "(" [vN ":" type ("," ...)*] ")" ":"
//! inst     := [vN ":" type ("," vN ":" type)* "="] ["diff" | "mixed"] opcode operands
//! ```

use crate::ad::{Activity, AdMode, DerivSpec, Tag};
use crate::entity::{Block, FuncId, Span, Value};
use crate::function::{Function, Linkage, Module, Param, ParamMode, ValueDef};
use crate::inst::{BinaryOp, BlockCall, CmpCond, Constant, InstData, MathFunc, UnaryOp};
use crate::types::{ScalarType, Type};
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for ParseError {}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Global(String),
    Number(String),
    Punct(&'static str),
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word(w) | Tok::Number(w) => write!(f, "`{w}`"),
            Tok::Global(g) => write!(f, "`@{g}`"),
            Tok::Punct(p) => write!(f, "`{p}`"),
        }
    }
}

struct Token {
    tok: Tok,
    line: usize,
    col: usize,
    /// Byte offset of the token's first character: instructions get a
    /// span there, so a runtime error in user IR names its line.
    offset: usize,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let bytes: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0, 1, 1);
    while i < chars.len() {
        let c = chars[i];
        let (start_line, start_col, start_byte) = (line, col, bytes[i]);
        let advance = |n: usize, i: &mut usize, col: &mut usize| {
            *i += n;
            *col += n;
        };
        if c == '\n' {
            i += 1;
            line += 1;
            col = 1;
            continue;
        }
        if c.is_whitespace() {
            advance(1, &mut i, &mut col);
            continue;
        }
        if c == ';' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        let tok = if c == '-' && chars.get(i + 1) == Some(&'>') {
            advance(2, &mut i, &mut col);
            Tok::Punct("->")
        } else if c.is_ascii_digit() || c == '-' {
            let start = i;
            advance(1, &mut i, &mut col);
            while i < chars.len()
                && (is_word_char(chars[i])
                    || (chars[i] == '-' && matches!(chars[i - 1], 'e' | 'E')))
            {
                advance(1, &mut i, &mut col);
            }
            Tok::Number(chars[start..i].iter().collect())
        } else if c == '@' {
            let start = i + 1;
            advance(1, &mut i, &mut col);
            while i < chars.len() && is_word_char(chars[i]) {
                advance(1, &mut i, &mut col);
            }
            Tok::Global(chars[start..i].iter().collect())
        } else if is_word_char(c) {
            let start = i;
            while i < chars.len() && is_word_char(chars[i]) {
                advance(1, &mut i, &mut col);
            }
            Tok::Word(chars[start..i].iter().collect())
        } else {
            let p = match c {
                '(' => "(",
                ')' => ")",
                '{' => "{",
                '}' => "}",
                ':' => ":",
                ',' => ",",
                '=' => "=",
                '<' => "<",
                '>' => ">",
                _ => {
                    return Err(ParseError {
                        line,
                        col,
                        message: format!("unexpected character `{c}`"),
                    });
                }
            };
            advance(1, &mut i, &mut col);
            Tok::Punct(p)
        };
        out.push(Token {
            tok,
            line: start_line,
            col: start_col,
            offset: start_byte,
        });
    }
    Ok(out)
}

struct Parser<'m> {
    toks: Vec<Token>,
    pos: usize,
    names: &'m [String],
}

macro_rules! err {
    ($p:expr, $($arg:tt)*) => {
        return Err($p.error(format!($($arg)*)))
    };
}

impl Parser<'_> {
    fn error(&self, message: String) -> ParseError {
        let (line, col) = match self.toks.get(self.pos).or(self.toks.last()) {
            Some(t) => (t.line, t.col),
            None => (1, 1),
        };
        ParseError { line, col, message }
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn peek_is(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    fn peek_word(&self) -> Option<&str> {
        match self.peek() {
            Some(Tok::Word(w)) => Some(w),
            _ => None,
        }
    }

    fn next(&mut self) -> Result<Tok, ParseError> {
        match self.toks.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok(t.tok.clone())
            }
            None => err!(self, "unexpected end of input"),
        }
    }

    fn expect(&mut self, p: &'static str) -> Result<(), ParseError> {
        match self.peek() {
            Some(Tok::Punct(q)) if *q == p => {
                self.pos += 1;
                Ok(())
            }
            Some(t) => err!(self, "expected `{p}`, found {t}"),
            None => err!(self, "expected `{p}`, found end of input"),
        }
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.peek_is(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn word(&mut self) -> Result<String, ParseError> {
        match self.next()? {
            Tok::Word(w) => Ok(w),
            t => {
                self.pos -= 1;
                err!(self, "expected a name, found {t}")
            }
        }
    }

    /// `auto` (0) or a positive interval, after `checkpoint.loop`.
    fn checkpoint_interval(&mut self) -> Result<u32, ParseError> {
        match self.next()? {
            Tok::Word(w) if w == "auto" => Ok(0),
            Tok::Number(n) => match n.parse::<u32>() {
                Ok(k) if k > 0 => Ok(k),
                _ => {
                    self.pos -= 1;
                    err!(self, "expected a positive interval, found `{n}`")
                }
            },
            t => {
                self.pos -= 1;
                err!(self, "expected `auto` or an interval, found {t}")
            }
        }
    }

    fn numbered(&mut self, prefix: &str) -> Result<u32, ParseError> {
        let w = self.word()?;
        match w.strip_prefix(prefix).and_then(|n| n.parse::<u32>().ok()) {
            Some(n) if n < 1 << 24 => Ok(n),
            _ => {
                self.pos -= 1;
                err!(self, "expected `{prefix}N`, found `{w}`")
            }
        }
    }

    fn value(&mut self) -> Result<Value, ParseError> {
        Ok(Value(self.numbered("v")?))
    }

    fn block(&mut self) -> Result<Block, ParseError> {
        Ok(Block(self.numbered("block")?))
    }

    fn scalar(&mut self) -> Result<ScalarType, ParseError> {
        let w = self.word()?;
        match ScalarType::from_name(&w) {
            Some(s) => Ok(s),
            None => {
                self.pos -= 1;
                err!(self, "expected a scalar type, found `{w}`")
            }
        }
    }

    fn ty(&mut self) -> Result<Type, ParseError> {
        match self.peek_word() {
            Some("arr") | Some("ref") | Some("dpair") => {
                let w = self.word()?;
                self.expect("<")?;
                let s = self.scalar()?;
                self.expect(">")?;
                Ok(match w.as_str() {
                    "arr" => Type::Array(s),
                    "ref" => Type::Ref(s),
                    _ => Type::Pair(s),
                })
            }
            _ => Ok(Type::Scalar(self.scalar()?)),
        }
    }

    fn value_list(&mut self) -> Result<Vec<Value>, ParseError> {
        let mut out = Vec::new();
        if matches!(self.peek_word(), Some(w) if w.starts_with('v')) {
            out.push(self.value()?);
            while self.peek_is(",") && self.lookahead_value(1) {
                self.pos += 1;
                out.push(self.value()?);
            }
        }
        Ok(out)
    }

    fn lookahead_value(&self, k: usize) -> bool {
        matches!(self.toks.get(self.pos + k).map(|t| &t.tok), Some(Tok::Word(w)) if w.starts_with('v') && w[1..].parse::<u32>().is_ok())
    }

    fn block_call(&mut self) -> Result<BlockCall, ParseError> {
        let block = self.block()?;
        self.expect("(")?;
        let args = self.value_list()?;
        self.expect(")")?;
        Ok(BlockCall { block, args })
    }

    fn two(&mut self) -> Result<[Value; 2], ParseError> {
        let a = self.value()?;
        self.expect(",")?;
        Ok([a, self.value()?])
    }

    fn constant(&mut self, ty: Option<Type>) -> Result<Constant, ParseError> {
        let text = match self.next()? {
            Tok::Number(n) | Tok::Word(n) => n,
            t => {
                self.pos -= 1;
                err!(self, "expected a constant, found {t}")
            }
        };
        let bad = |p: &Self| {
            p.error(format!(
                "bad constant `{text}` for type {}",
                ty.map_or("?".into(), |t| t.to_string())
            ))
        };
        Ok(match ty {
            Some(Type::Scalar(ScalarType::Bool)) => match text.as_str() {
                "true" => Constant::Bool(true),
                "false" => Constant::Bool(false),
                _ => return Err(bad(self)),
            },
            Some(Type::Scalar(ScalarType::I64)) => {
                Constant::I64(text.parse().map_err(|_| bad(self))?)
            }
            Some(Type::Scalar(ScalarType::F32)) => {
                Constant::F32(text.parse().map_err(|_| bad(self))?)
            }
            Some(Type::Scalar(ScalarType::F64)) => {
                Constant::F64(text.parse().map_err(|_| bad(self))?)
            }
            _ => return Err(bad(self)),
        })
    }

    fn inst_data(&mut self, result_types: &[Type]) -> Result<InstData, ParseError> {
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
            "new" => InstData::ArrayNew { len: self.value()? },
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
            "copy" => InstData::ArrayCopy {
                array: self.value()?,
            },
            "lencheck" => InstData::LenCheck { args: self.two()? },
            "free.defer" => InstData::DeferFree {
                array: self.value()?,
            },
            "tape.push" => InstData::TapePush {
                value: self.value()?,
                tape,
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
        };
        Ok(data)
    }

    fn global(&mut self) -> Result<String, ParseError> {
        match self.next()? {
            Tok::Global(g) => Ok(g),
            t => {
                self.pos -= 1;
                err!(self, "expected `@name`, found {t}")
            }
        }
    }

    /// `forward @f(Dual, Const)` or `reverse @f(Active, ActiveOnly)`.
    fn deriv_spec(&mut self) -> Result<DerivSpec, ParseError> {
        let mode = match self.word()?.as_str() {
            "forward" => AdMode::Forward,
            "reverse" => AdMode::Reverse,
            w => err!(self, "expected `forward` or `reverse`, found `{w}`"),
        };
        let of = self.global()?;
        self.expect("(")?;
        let mut acts = Vec::new();
        while !self.peek_is(")") {
            if !acts.is_empty() {
                self.expect(",")?;
            }
            let w = self.word()?;
            let Some(a) = Activity::from_name(&w) else {
                self.pos -= 1;
                err!(self, "unknown activity `{w}`")
            };
            acts.push(a);
        }
        self.expect(")")?;
        let ret = acts.pop().unwrap_or(Activity::Const);
        // The return activity is always written, `Const` for `void`.
        Ok(DerivSpec {
            mode,
            of,
            params: acts,
            ret,
        })
    }

    fn function(&mut self) -> Result<Function, ParseError> {
        let keyword = self.word()?;
        let linkage = match keyword.as_str() {
            "func" => Linkage::Export,
            "extern" => Linkage::Import,
            "static" => Linkage::Static,
            _ => {
                self.pos -= 1;
                err!(self, "expected `func` or `extern`, found `{keyword}`")
            }
        };
        let name = match self.next()? {
            Tok::Global(g) => g,
            t => err!(self, "expected `@name`, found {t}"),
        };
        self.expect("(")?;
        let mut params = Vec::new();
        while !self.peek_is(")") {
            if !params.is_empty() {
                self.expect(",")?;
            }
            let mut mode = ParamMode::In;
            if matches!(self.peek_word(), Some("inout") | Some("out"))
                && !matches!(
                    self.toks.get(self.pos + 1).map(|t| &t.tok),
                    Some(Tok::Punct(":"))
                )
            {
                mode = if self.word()? == "inout" {
                    ParamMode::Inout
                } else {
                    ParamMode::Out
                };
            }
            let pname = self.word()?;
            self.expect(":")?;
            params.push(Param {
                name: pname,
                ty: self.ty()?,
                mode,
            });
        }
        self.expect(")")?;
        let mut returns = Vec::new();
        if self.eat("->") {
            returns.push(self.ty()?);
            while self.eat(",") {
                returns.push(self.ty()?);
            }
        }
        let mut func = Function::new(name, params, returns, linkage);
        loop {
            match self.peek_word() {
                Some("reverse_derivative") => {
                    self.pos += 1;
                    func.custom_reverse = Some(self.global()?);
                }
                Some("forward_derivative") => {
                    self.pos += 1;
                    func.custom_forward = Some(self.global()?);
                }
                Some("checkpoint") => {
                    self.pos += 1;
                    func.checkpoint = true;
                }
                _ => break,
            }
        }
        if self.eat("=") {
            func.deriv = Some(self.deriv_spec()?);
        }
        if linkage == Linkage::Import || (func.deriv.is_some() && !self.peek_is("{")) {
            return Ok(func);
        }
        self.expect("{")?;
        let mut current: Option<Block> = None;
        while !self.eat("}") {
            if matches!(self.peek_word(), Some(w) if w.starts_with("block")) {
                let block = self.block()?;
                func.dfg.ensure_block(block);
                if func.layout.contains(&block) {
                    err!(self, "block `{block}` defined twice");
                }
                func.layout.push(block);
                self.expect("(")?;
                let mut index = 0;
                while !self.peek_is(")") {
                    if index > 0 {
                        self.expect(",")?;
                    }
                    let v = self.value()?;
                    self.expect(":")?;
                    let ty = self.ty()?;
                    if !func
                        .dfg
                        .define_value_at(v, ty, ValueDef::Param(block, index))
                    {
                        err!(self, "value `{v}` defined twice");
                    }
                    func.dfg.block_mut(block).params.push(v);
                    index += 1;
                }
                self.expect(")")?;
                self.expect(":")?;
                current = Some(block);
                continue;
            }
            let Some(block) = current else {
                err!(self, "instruction outside a block")
            };
            let at = self
                .toks
                .get(self.pos)
                .map_or(Span::UNDEFINED, |t| Span::new(t.offset, t.offset + 1));
            let mut results = Vec::new();
            if self.lookahead_value(0) {
                loop {
                    let v = self.value()?;
                    self.expect(":")?;
                    let ty = self.ty()?;
                    results.push((v, ty));
                    if !self.eat(",") {
                        break;
                    }
                }
                self.expect("=")?;
            }
            let types: Vec<Type> = results.iter().map(|r| r.1).collect();
            let tag = match self.peek_word() {
                Some("diff") => Tag::Diff,
                Some("mixed") => Tag::Mixed,
                _ => Tag::Primal,
            };
            if tag != Tag::Primal {
                self.pos += 1;
            }
            let data = self.inst_data(&types)?;
            let mut values = Vec::new();
            for (v, ty) in results {
                if !func.dfg.define_value_at(v, ty, ValueDef::Unused) || values.contains(&v) {
                    err!(self, "value `{v}` defined twice");
                }
                values.push(v);
            }
            let inst = func.dfg.make_inst_with_results(data, values);
            func.set_span(inst, at);
            func.set_tag(inst, tag);
            func.dfg.block_mut(block).insts.push(inst);
        }
        Ok(func)
    }
}

/// Parses a whole module. Function names resolve across the module.
pub fn parse_module(text: &str) -> Result<Module, ParseError> {
    let toks = lex(text)?;
    let mut names = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if matches!(&t.tok, Tok::Word(w) if w == "func" || w == "extern" || w == "static") {
            if let Some(Token {
                tok: Tok::Global(g),
                ..
            }) = toks.get(i + 1)
            {
                names.push(g.clone());
            }
        }
    }
    let mut parser = Parser {
        toks,
        pos: 0,
        names: &names,
    };
    let mut module = Module::default();
    while parser.peek().is_some() {
        let func = parser.function()?;
        if module.find(&func.name).is_some() {
            return Err(parser.error(format!("function `@{}` defined twice", func.name)));
        }
        module.push(func);
    }
    Ok(module)
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
