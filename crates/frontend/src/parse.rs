//! Parsing: runs the LALRPOP parser over the logos tokens and turns every
//! LALRPOP error into a `Diagnostic`. Nothing of LALRPOP escapes this module.

use crate::ast::{Attr, Expr, Item, Stmt};
use crate::diag::Diagnostic;
use crate::lexer::{self, LexError, LexErrorKind, Tok};
use adc_ir::Span;
use lalrpop_util::{lalrpop_mod, ParseError};

lalrpop_mod!(
    #[allow(clippy::all, unused)]
    grammar
);

pub(crate) fn make_while(head: (Vec<Attr>, Expr, usize), body: Stmt, r: usize) -> Stmt {
    let (attrs, cond, l) = head;
    let stmt = Stmt::While {
        cond,
        body: vec![body],
        span: Span::new(l, r),
    };
    wrap_attrs(attrs, stmt)
}

pub(crate) fn make_for(
    head: (Vec<Attr>, Option<Stmt>, Option<Expr>, Option<Stmt>, usize),
    body: Stmt,
    r: usize,
) -> Stmt {
    let (attrs, init, cond, step, l) = head;
    let stmt = Stmt::For {
        init: init.map(Box::new),
        cond,
        step: step.map(Box::new),
        body: vec![body],
        span: Span::new(l, r),
    };
    wrap_attrs(attrs, stmt)
}

fn wrap_attrs(attrs: Vec<Attr>, stmt: Stmt) -> Stmt {
    if attrs.is_empty() {
        stmt
    } else {
        Stmt::Attributed {
            attrs,
            stmt: Box::new(stmt),
        }
    }
}

/// The spelling of a token for messages: "`;`", "identifier `x`".
fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Int(i) => format!("integer `{i}`"),
        Tok::Float(f) => format!("number `{f}`"),
        Tok::Ident(s) => format!("identifier `{s}`"),
        other => format!("`{}`", spelling(other)),
    }
}

fn spelling(tok: &Tok) -> &'static str {
    match tok {
        Tok::Int(_) => "integer",
        Tok::Float(_) => "number",
        Tok::Ident(_) => "identifier",
        Tok::BlockComment => "/*",
        Tok::KwDouble => "double",
        Tok::KwFloat => "float",
        Tok::KwInt => "int",
        Tok::KwBool => "bool",
        Tok::KwVoid => "void",
        Tok::KwAuto => "auto",
        Tok::KwConst => "const",
        Tok::KwExtern => "extern",
        Tok::KwStatic => "static",
        Tok::KwIf => "if",
        Tok::KwElse => "else",
        Tok::KwFor => "for",
        Tok::KwWhile => "while",
        Tok::KwReturn => "return",
        Tok::KwBreak => "break",
        Tok::KwContinue => "continue",
        Tok::KwIn => "in",
        Tok::KwOut => "out",
        Tok::KwInout => "inout",
        Tok::KwTrue => "true",
        Tok::KwFalse => "false",
        Tok::LParen => "(",
        Tok::RParen => ")",
        Tok::LBrace => "{",
        Tok::RBrace => "}",
        Tok::LBracket => "[",
        Tok::RBracket => "]",
        Tok::Comma => ",",
        Tok::DotDot | Tok::IntDotDot(_) => "..",
        Tok::Semi => ";",
        Tok::Question => "?",
        Tok::Colon => ":",
        Tok::Assign => "=",
        Tok::PlusAssign => "+=",
        Tok::MinusAssign => "-=",
        Tok::StarAssign => "*=",
        Tok::SlashAssign => "/=",
        Tok::PlusPlus => "++",
        Tok::MinusMinus => "--",
        Tok::OrOr => "||",
        Tok::AndAnd => "&&",
        Tok::EqEq => "==",
        Tok::NotEq => "!=",
        Tok::Lt => "<",
        Tok::Le => "<=",
        Tok::Gt => ">",
        Tok::Ge => ">=",
        Tok::Plus => "+",
        Tok::Minus => "-",
        Tok::Star => "*",
        Tok::Slash => "/",
        Tok::Percent => "%",
        Tok::Bang => "!",
    }
}

fn expected_list(expected: &[String]) -> String {
    // A missing `;` is by far the commonest case; name it alone.
    if expected.iter().any(|e| e == "\";\"") {
        return "`;`".into();
    }
    let mut items: Vec<String> = expected
        .iter()
        .map(|e| format!("`{}`", e.trim_matches('"')))
        .collect();
    items.sort();
    items.dedup();
    if items.len() > 6 {
        items.truncate(6);
        items.push("...".into());
    }
    items.join(", ")
}

fn lex_diagnostic(e: &LexError) -> Diagnostic {
    let span = Span::new(e.start, e.end);
    match e.kind {
        LexErrorKind::UnknownChar => Diagnostic::error("E0001", "unexpected character", span),
        LexErrorKind::IntOutOfRange => {
            Diagnostic::error("E0002", "integer literal out of range for `int`", span)
        }
        LexErrorKind::UnterminatedComment => {
            Diagnostic::error("E0003", "unterminated block comment", span)
        }
    }
}

fn to_diagnostic(err: &ParseError<usize, Tok, LexError>, source_len: usize) -> Diagnostic {
    match err {
        ParseError::InvalidToken { location } => Diagnostic::error(
            "E0001",
            "invalid token",
            Span::new(*location, *location + 1),
        ),
        ParseError::UnrecognizedEof { location, expected } => Diagnostic::error(
            "E0004",
            format!("expected {}, found end of file", expected_list(expected)),
            Span::new((*location).min(source_len), source_len),
        ),
        ParseError::UnrecognizedToken {
            token: (l, tok, r),
            expected,
        } => Diagnostic::error(
            "E0005",
            format!(
                "expected {}, found {}",
                expected_list(expected),
                describe(tok)
            ),
            Span::new(*l, *r),
        ),
        ParseError::ExtraToken { token: (l, tok, r) } => Diagnostic::error(
            "E0005",
            format!("unexpected {}", describe(tok)),
            Span::new(*l, *r),
        ),
        ParseError::User { error } => lex_diagnostic(error),
    }
}

/// Parses a whole program, reporting every syntax error it can recover from.
pub fn parse_program(source: &str) -> (Vec<Item>, Vec<Diagnostic>) {
    let mut recovered = Vec::new();
    let parser = grammar::ProgramParser::new();
    let result = parser.parse(&mut recovered, lexer::tokens(source));
    let mut diags: Vec<Diagnostic> = Vec::new();
    for rec in &recovered {
        diags.push(to_diagnostic(&rec.error, source.len()));
    }
    let items = match result {
        Ok(items) => items,
        Err(e) => {
            diags.push(to_diagnostic(&e, source.len()));
            Vec::new()
        }
    };
    // One bad token can be reported by recovery and again at the end.
    diags.dedup_by(|a, b| a.message == b.message && a.span == b.span);
    (items, diags)
}

/// Parses a single expression (used by tests and const evaluation).
pub fn parse_expr(source: &str) -> Result<Expr, Diagnostic> {
    let mut recovered = Vec::new();
    grammar::ExprParser::new()
        .parse(&mut recovered, lexer::tokens(source))
        .map_err(|e| to_diagnostic(&e, source.len()))
}
