//! The `.ad` lexer (logos), producing the token stream LALRPOP consumes.
//!
//! Lexing never fails hard: an unknown character or a literal out of range
//! becomes a `LexError` with its span, which the parser reports and skips.

use logos::Logos;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Default)]
pub enum LexErrorKind {
    #[default]
    UnknownChar,
    IntOutOfRange,
    UnterminatedComment,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LexError {
    pub kind: LexErrorKind,
    pub start: usize,
    pub end: usize,
}

fn parse_int(lex: &mut logos::Lexer<'_, Tok>) -> Result<i64, LexErrorKind> {
    lex.slice()
        .parse::<i64>()
        .map_err(|_| LexErrorKind::IntOutOfRange)
}

fn block_comment(lex: &mut logos::Lexer<'_, Tok>) -> logos::FilterResult<(), LexErrorKind> {
    match lex.remainder().find("*/") {
        Some(end) => {
            lex.bump(end + 2);
            logos::FilterResult::Skip
        }
        None => {
            lex.bump(lex.remainder().len());
            logos::FilterResult::Error(LexErrorKind::UnterminatedComment)
        }
    }
}

#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(error = LexErrorKind)]
#[logos(skip r"[ \t\r\n\f\x0B\u{FEFF}]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
pub enum Tok {
    #[token("/*", block_comment)]
    BlockComment,

    #[regex(r"[0-9]+", parse_int)]
    Int(i64),
    /// `3..`: an integer followed by `..` (not the float `3.` and a `.`);
    /// `tokens` splits it into `Int` and `DotDot`.
    #[regex(r"[0-9]+\.\.", |lex| { let s = lex.slice(); s[..s.len() - 2].parse::<i64>().map_err(|_| LexErrorKind::IntOutOfRange) })]
    IntDotDot(i64),
    #[regex(r"([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fF]?", |lex| lex.slice().to_string())]
    #[regex(r"[0-9]+[eE][+-]?[0-9]+[fF]?", |lex| lex.slice().to_string())]
    Float(String),
    /// `1.5e`, `2e+`: a number whose exponent has no digits (longer than
    /// the number before the `e`, shorter than any with exponent digits).
    /// `parse` reports it and reads the number before the `e`.
    #[regex(r"([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)[eE][+-]?", |lex| lex.slice().to_string())]
    EmptyExponent(String),
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice().to_string(), priority = 1)]
    Ident(String),

    #[token("double")]
    KwDouble,
    #[token("float")]
    KwFloat,
    #[token("int")]
    KwInt,
    #[token("bool")]
    KwBool,
    #[token("void")]
    KwVoid,
    #[token("auto")]
    KwAuto,
    #[token("const")]
    KwConst,
    #[token("static")]
    KwStatic,
    #[token("extern")]
    KwExtern,
    #[token("if")]
    KwIf,
    #[token("else")]
    KwElse,
    #[token("for")]
    KwFor,
    #[token("while")]
    KwWhile,
    #[token("return")]
    KwReturn,
    #[token("break")]
    KwBreak,
    #[token("continue")]
    KwContinue,
    #[token("in")]
    KwIn,
    #[token("out")]
    KwOut,
    #[token("inout")]
    KwInout,
    #[token("true")]
    KwTrue,
    #[token("false")]
    KwFalse,

    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token(",")]
    Comma,
    #[token("..")]
    DotDot,
    #[token(";")]
    Semi,
    #[token("?")]
    Question,
    #[token(":")]
    Colon,
    #[token("=")]
    Assign,
    #[token("+=")]
    PlusAssign,
    #[token("-=")]
    MinusAssign,
    #[token("*=")]
    StarAssign,
    #[token("/=")]
    SlashAssign,
    #[token("++")]
    PlusPlus,
    #[token("--")]
    MinusMinus,
    #[token("||")]
    OrOr,
    #[token("&&")]
    AndAnd,
    #[token("==")]
    EqEq,
    #[token("!=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    Le,
    #[token(">")]
    Gt,
    #[token(">=")]
    Ge,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("!")]
    Bang,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Int(i) => write!(f, "`{i}`"),
            Tok::Float(s) | Tok::Ident(s) => write!(f, "`{s}`"),
            other => {
                let dbg = format!("{other:?}");
                write!(f, "{dbg}")
            }
        }
    }
}

pub type Spanned = Result<(usize, Tok, usize), LexError>;

/// The token iterator handed to the LALRPOP parser.
pub fn tokens(source: &str) -> impl Iterator<Item = Spanned> + '_ {
    Tok::lexer(source)
        .spanned()
        .flat_map(|(res, span)| match res {
            Ok(Tok::IntDotDot(i)) => vec![
                Ok((span.start, Tok::Int(i), span.end - 2)),
                Ok((span.end - 2, Tok::DotDot, span.end)),
            ],
            Ok(tok) => vec![Ok((span.start, tok, span.end))],
            Err(kind) => vec![Err(LexError {
                kind,
                start: span.start,
                end: span.end,
            })],
        })
}
