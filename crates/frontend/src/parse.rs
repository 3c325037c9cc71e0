//! Parsing: runs the LALRPOP parser over the logos tokens and turns every
//! LALRPOP error into a `Diagnostic`. Nothing of LALRPOP escapes this module.

use crate::ast::{Attr, Expr, Item, Stmt};
use crate::diag::Diagnostic;
use crate::lexer::{self, LexError, LexErrorKind, Tok};
use crate::repair;
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
pub(crate) fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Int(i) => format!("integer `{i}`"),
        Tok::Float(f) | Tok::EmptyExponent(f) => format!("number `{f}`"),
        Tok::Ident(s) => format!("identifier `{s}`"),
        other if is_keyword(other) => format!("keyword `{}`", spelling(other)),
        other => format!("`{}`", spelling(other)),
    }
}

pub(crate) fn spelling(tok: &Tok) -> &'static str {
    match tok {
        Tok::Int(_) => "integer",
        Tok::Float(_) | Tok::EmptyExponent(_) => "number",
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

/// Parses a whole program, reporting the first syntax error of each item it
/// can recover from.
///
/// A syntax error with a plain fix (a keyword where a name belongs, a
/// missing `;`, a prefix `++`) is reported once and fixed in the tokens
/// before a second parse, so it causes no follow-on errors (`repair`); an
/// error that a closing delimiter would fix points at the opening one too.
pub fn parse_program(source: &str) -> (Vec<Item>, Vec<Diagnostic>) {
    let mut toks: Vec<lexer::Spanned> = lexer::tokens(source).collect();
    let mut diags = Vec::new();
    empty_exponents(&mut toks, &mut diags);
    let (mut items, mut errors) = parse_tokens(&toks);
    // Each round fixes one mistake; a program has few of them.
    for _ in 0..16 {
        let Some(fix) = repair::repair(&toks, &errors, source) else {
            break;
        };
        let (fixed_items, fixed_errors) = parse_tokens(&fix.toks);
        if let Some((from, to)) = fix.must_pass {
            let stuck = fixed_errors
                .iter()
                .any(|e| repair::error_start(e).is_some_and(|s| (from..=to).contains(&s)));
            if stuck {
                break;
            }
        }
        diags.push(fix.diag);
        (toks, items, errors) = (fix.toks, fixed_items, fixed_errors);
    }
    // Errors in source order; an opening delimiter blamed once was
    // dropped by recovery there, so later errors look past it.
    errors.sort_by_key(|e| repair::error_start(e).unwrap_or(usize::MAX));
    first_error_per_item(&mut errors, &toks);
    let mut blamed = Vec::new();
    for e in &errors {
        diags.push(with_delimiter_label(
            to_diagnostic(e, source.len()),
            e,
            &toks,
            &mut blamed,
        ));
    }
    diags.sort_by_key(|d| (d.span.start, d.span.end));
    // One bad token can be reported by recovery and again at the end.
    diags.dedup_by(|a, b| a.message == b.message && a.span == b.span);
    (items, diags)
}

/// Reports each number whose exponent has no digits (`1.5e`, E0007) and
/// reads it as the number before the `e`, so it causes no other error.
fn empty_exponents(toks: &mut [lexer::Spanned], diags: &mut Vec<Diagnostic>) {
    for t in toks.iter_mut() {
        let Ok((l, Tok::EmptyExponent(text), r)) = t else {
            continue;
        };
        diags.push(
            Diagnostic::error(
                "E0007",
                "the exponent of this number has no digits",
                Span::new(*l, *r),
            )
            .with_help("write the exponent's digits (`1.5e3`), or leave the `e` out"),
        );
        let mantissa = text.trim_end_matches(['e', 'E', '+', '-']);
        let mantissa = if mantissa.contains('.') {
            mantissa.to_string()
        } else {
            format!("{mantissa}.0")
        };
        *t = Ok((*l, Tok::Float(mantissa), *r));
    }
}

/// Keeps the first of `errors` (in source order) in each top-level item:
/// the tokens up to a `}` that closes all braces or a `;` outside them.
/// After an error no repair fixed, recovery guesses where the statement
/// or item ends, and what it then finds in the rest of the item (a `)`
/// of the same `for`, a `return` read as an item after a `}` taken for
/// the function's) are follow-on errors of the same mistake. An end of
/// file inside an unclosed `{` is always reported.
fn first_error_per_item(
    errors: &mut Vec<ParseError<usize, Tok, LexError>>,
    toks: &[lexer::Spanned],
) {
    let mut ends = Vec::new();
    let mut depth = 0usize;
    for (_, tok, r) in toks.iter().flatten() {
        match tok {
            Tok::LBrace => depth += 1,
            Tok::RBrace => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    ends.push(*r);
                }
            }
            Tok::Semi if depth == 0 => ends.push(*r),
            _ => (),
        }
    }
    let item_of = |e: &ParseError<usize, Tok, LexError>| {
        let start = repair::error_start(e).unwrap_or(usize::MAX);
        ends.partition_point(|&end| end <= start)
    };
    // An end of file inside braces the tokens leave open is a mistake of
    // its own (an unclosed `{`), whatever came before it.
    let unclosed = depth > 0;
    let mut last = None;
    errors.retain(|e| {
        if unclosed && matches!(e, ParseError::UnrecognizedEof { .. }) {
            return true;
        }
        let item = item_of(e);
        let first = last != Some(item);
        last = Some(item);
        first
    });
}

/// One parse of `toks`: the items and every error, recovered or final.
fn parse_tokens(toks: &[lexer::Spanned]) -> (Vec<Item>, Vec<ParseError<usize, Tok, LexError>>) {
    let mut recovered = Vec::new();
    let result = grammar::ProgramParser::new().parse(&mut recovered, toks.iter().cloned());
    let mut errors: Vec<_> = recovered.into_iter().map(|r| r.error).collect();
    match result {
        Ok(items) => (items, errors),
        Err(e) => {
            errors.push(e);
            (Vec::new(), errors)
        }
    }
}

pub(crate) fn is_keyword(tok: &Tok) -> bool {
    !matches!(
        tok,
        Tok::Int(_) | Tok::Float(_) | Tok::EmptyExponent(_) | Tok::Ident(_) | Tok::BlockComment
    ) && spelling(tok).bytes().all(|b| b.is_ascii_lowercase())
}

/// The closing delimiter of an opening one.
fn closer(open: &Tok) -> Option<&'static str> {
    match open {
        Tok::LParen => Some(")"),
        Tok::LBracket => Some("]"),
        Tok::LBrace => Some("}"),
        _ => None,
    }
}

/// `d` pointing also at the innermost delimiter still open where the
/// error is, when closing it is among what the parser expected (at the end
/// of the file, the message says so instead of naming a `;`).
fn with_delimiter_label(
    d: Diagnostic,
    e: &ParseError<usize, Tok, LexError>,
    toks: &[lexer::Spanned],
    blamed: &mut Vec<usize>,
) -> Diagnostic {
    let (at, expected) = match e {
        ParseError::UnrecognizedEof { location, expected } => (*location, expected),
        ParseError::UnrecognizedToken { token, expected } => (token.0, expected),
        _ => return d,
    };
    // A function's head inside a body: the `}` before it is missing,
    // whatever the parser expected there.
    let head = toks
        .iter()
        .position(|t| matches!(t, Ok((l, _, _)) if *l == at))
        .is_some_and(|k| repair::function_head(toks, k) || repair::function_head(toks, k + 2));
    let mut open: Vec<(&Tok, usize, usize)> = Vec::new();
    for (l, tok, r) in toks.iter().flatten() {
        if *l >= at {
            break;
        }
        if closer(tok).is_some() {
            open.push((tok, *l, *r));
        } else if let Some(top) = open.last() {
            if closer(top.0) == Some(spelling(tok)) {
                open.pop();
            }
        }
    }
    let Some(&(tok, l, r)) = open.iter().rev().find(|o| !blamed.contains(&o.1)) else {
        return d;
    };
    let Some(close) = closer(tok) else {
        return d;
    };
    let eof = matches!(e, ParseError::UnrecognizedEof { .. });
    let head = head && close == "}";
    if !eof && !head && !expected.iter().any(|x| x.trim_matches('"') == close) {
        return d;
    }
    blamed.push(l);
    let open_text = spelling(tok);
    let mut d = d.with_label(Span::new(l, r), format!("this `{open_text}` is not closed"));
    if head {
        d = d.with_help(
            "a function cannot be defined inside another: add the missing `}` before it",
        );
    }
    if eof {
        d.message = format!("expected `{close}`, found end of file");
    }
    d
}

/// Parses a single expression (used by tests and const evaluation).
pub fn parse_expr(source: &str) -> Result<Expr, Diagnostic> {
    let mut recovered = Vec::new();
    grammar::ExprParser::new()
        .parse(&mut recovered, lexer::tokens(source))
        .map_err(|e| to_diagnostic(&e, source.len()))
}
