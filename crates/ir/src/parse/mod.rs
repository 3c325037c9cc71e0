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

/// Returns a `ParseError` at the current token (defined before the
/// submodules, which use it).
macro_rules! err {
    ($p:expr, $($arg:tt)*) => {
        return Err($p.error(format!($($arg)*)))
    };
}

mod function;
mod inst;
mod lex;

use crate::entity::{Block, Value};
use crate::function::Module;
use crate::inst::{BlockCall, Constant};
use crate::types::{ScalarType, Type};
use lex::{lex, Tok, Token};
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

struct Parser<'m> {
    toks: Vec<Token>,
    pos: usize,
    names: &'m [String],
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
