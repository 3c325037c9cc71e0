//! Token repairs: a syntax error whose fix is plain is reported once, the
//! tokens are fixed, and the file is parsed again, so the mistake causes no
//! follow-on errors.
//!
//! - a keyword where a name belongs (`double f(double for)`) is read as
//!   that name;
//! - a missing `;` is inserted where the parser wanted one (the error then
//!   points just after the previous token, where the `;` belongs);
//! - a prefix `++i` / `--i` is reported and its operator dropped;
//! - `a ** b` is reported and read as `a * b`.
//!
//! A function's head (`double g(`) where a statement belongs is not given a
//! `;`: a `}` is missing before it ([`function_head`]; `parse` points at
//! the `{` left open).
//!
//! A `;` insertion or a dropped operator is kept only when the parse of
//! the fixed tokens gets past the place; otherwise the error is reported
//! as the parser found it.

use crate::diag::Diagnostic;
use crate::lexer::{LexError, Spanned, Tok};
use crate::parse::{describe, is_keyword, spelling};
use adc_ir::Span;
use lalrpop_util::ParseError;

pub(crate) type Error = ParseError<usize, Tok, LexError>;

/// A fix of the token stream, and the diagnostic that reports it.
pub(crate) struct Repair {
    pub toks: Vec<Spanned>,
    pub diag: Diagnostic,
    /// Bytes where the parse of `toks` must have no error for the fix to
    /// be kept (`None`: always kept).
    pub must_pass: Option<(usize, usize)>,
}

/// The fix of the first error that has one, if any.
pub(crate) fn repair(toks: &[Spanned], errors: &[Error], source: &str) -> Option<Repair> {
    let mut sorted: Vec<&Error> = errors.iter().collect();
    sorted.sort_by_key(|e| error_start(e).unwrap_or(usize::MAX));
    for (n, e) in sorted.into_iter().enumerate() {
        let ParseError::UnrecognizedToken {
            token: (l, tok, r),
            expected,
        } = e
        else {
            continue;
        };
        let Some(at) = toks
            .iter()
            .position(|t| matches!(t, Ok((tl, _, _)) if tl == l))
        else {
            continue;
        };
        if function_head(toks, at) || function_head(toks, at + 2) {
            // A `}` is missing: `parse` says so.
            continue;
        }
        let fix = if n == 0 && is_keyword(tok) && expects(expected, "identifier") {
            // Only the first error: a keyword met after recovery may
            // well be where it belongs.
            Some(keyword_as_name(toks, at, tok, *l, *r))
        } else if matches!(tok, Tok::PlusPlus | Tok::MinusMinus) {
            prefix_step(toks, at, tok, *l, *r, source)
        } else if *tok == Tok::Star {
            power_operator(toks, at, *l, *r)
        } else if expects(expected, ";") {
            missing_semicolon(toks, at, tok, *l, *r, source)
        } else {
            None
        };
        if fix.is_some() {
            return fix;
        }
    }
    None
}

/// Whether the token at `at` is the `(` of `TYPE NAME (` (the parser stops
/// at the `(`, or at the `TYPE` when it is `void`) met where a statement
/// belongs: a function's head inside another function's body,
/// which a `}` left out before it explains (a `;` before the `(` would
/// only make more errors).
pub(crate) fn function_head(toks: &[Spanned], at: usize) -> bool {
    let tok = |k: usize| match toks.get(k) {
        Some(Ok((_, t, _))) => Some(t),
        _ => None,
    };
    at >= 2
        && matches!(tok(at), Some(Tok::LParen))
        && matches!(tok(at - 1), Some(Tok::Ident(_)))
        && matches!(
            tok(at - 2),
            Some(Tok::KwDouble | Tok::KwFloat | Tok::KwInt | Tok::KwBool | Tok::KwVoid)
        )
}

pub(crate) fn error_start(e: &Error) -> Option<usize> {
    match e {
        ParseError::InvalidToken { location } | ParseError::UnrecognizedEof { location, .. } => {
            Some(*location)
        }
        ParseError::UnrecognizedToken { token, .. } | ParseError::ExtraToken { token } => {
            Some(token.0)
        }
        ParseError::User { error } => Some(error.start),
    }
}

fn expects(expected: &[String], what: &str) -> bool {
    expected.iter().any(|e| e.trim_matches('"') == what)
}

fn keyword_as_name(toks: &[Spanned], at: usize, tok: &Tok, l: usize, r: usize) -> Repair {
    let word = spelling(tok);
    let diag = Diagnostic::error(
        "E0005",
        format!("expected a name, found keyword `{word}`"),
        Span::new(l, r),
    )
    .with_note(format!(
        "`{word}` is a keyword and cannot name a variable, parameter or function"
    ))
    .with_help(format!("rename it: `{word}_`"));
    let mut toks = toks.to_vec();
    toks[at] = Ok((l, Tok::Ident(word.to_string()), r));
    Repair {
        toks,
        diag,
        must_pass: None,
    }
}

/// The end of the token before `at`, if that token lexed.
fn previous_end(toks: &[Spanned], at: usize) -> Option<usize> {
    match toks.get(at.checked_sub(1)?)? {
        Ok((_, _, r)) => Some(*r),
        Err(_) => None,
    }
}

/// A `;` inserted before the token at `at`. When that token starts a
/// later line (or is a `}`), the `;` was forgotten at the end of the
/// previous token, and the error points there, as rustc's does.
fn missing_semicolon(
    toks: &[Spanned],
    at: usize,
    tok: &Tok,
    l: usize,
    r: usize,
    source: &str,
) -> Option<Repair> {
    let end = previous_end(toks, at)?;
    let found = describe(tok);
    let line_end = source.get(end..l).is_some_and(|gap| gap.contains('\n'));
    let diag = if line_end || *tok == Tok::RBrace {
        Diagnostic::error(
            "E0005",
            format!("expected `;`, found {found}"),
            Span::new(end, end),
        )
        .with_label(Span::new(l, r), "unexpected token")
        .with_help("add `;` here")
    } else {
        Diagnostic::error(
            "E0005",
            format!("expected `;`, found {found}"),
            Span::new(l, r),
        )
    };
    let mut toks = toks.to_vec();
    toks.insert(at, Ok((end, Tok::Semi, end)));
    Some(Repair {
        toks,
        diag,
        must_pass: Some((end, l)),
    })
}

/// `++i` or `--i`, which `.ad` does not have: the operator is dropped. Only
/// when an operand follows and none precedes (`a ++ b` is another mistake).
fn prefix_step(
    toks: &[Spanned],
    at: usize,
    tok: &Tok,
    l: usize,
    r: usize,
    source: &str,
) -> Option<Repair> {
    let operand_before = matches!(
        toks.get(at.checked_sub(1)?),
        Some(Ok((
            _,
            Tok::Ident(_)
                | Tok::Int(_)
                | Tok::Float(_)
                | Tok::RBracket
                | Tok::KwTrue
                | Tok::KwFalse,
            _
        )))
    );
    if operand_before || !matches!(toks.get(at + 1), Some(Ok((_, Tok::Ident(_), _)))) {
        return None;
    }
    let operand = operand_text(toks, at + 1, source)?;
    let (op, word, compound) = if *tok == Tok::PlusPlus {
        ("++", "increment", "+=")
    } else {
        ("--", "decrement", "-=")
    };
    // A statement (or a `for` step) starts after these; elsewhere the
    // `++` stands in an expression, where `.ad` has no `++` at all.
    let statement = matches!(
        toks.get(at.wrapping_sub(1)),
        None | Some(Ok((
            _,
            Tok::Semi | Tok::LBrace | Tok::RBrace | Tok::RParen,
            _
        )))
    );
    let diag = Diagnostic::error(
        "E0005",
        format!("`.ad` has no prefix {word} operator"),
        Span::new(l, r),
    );
    let diag = if statement {
        diag.with_help(format!(
            "write `{operand}{op}` (or `{operand} {compound} 1`): `{op}` goes after the variable"
        ))
    } else {
        diag.with_note(format!(
            "`{op}` is a statement of its own, not an expression"
        ))
        .with_help(format!(
            "write `{operand}{op};` (or `{operand} {compound} 1;`) before this statement"
        ))
    };
    Some(dropping(toks, at, diag, (l, r)))
}

/// `a ** b` (Python's and Fortran's power): reported, and read as `a * b`
/// so that the rest of the file is checked for syntax only once more.
fn power_operator(toks: &[Spanned], at: usize, l: usize, r: usize) -> Option<Repair> {
    let Some(Ok((first, Tok::Star, first_end))) = toks.get(at.checked_sub(1)?) else {
        return None;
    };
    if *first_end != l {
        return None;
    }
    let diag = Diagnostic::error("E0005", "`.ad` has no `**` operator", Span::new(*first, r))
        .with_help("write `pow(a, b)` for `a` to the power `b` (or `a * a` for a square)");
    Some(dropping(toks, at, diag, (l, r)))
}

/// The repair that drops token `at`, kept when the parse gets past `place`.
fn dropping(toks: &[Spanned], at: usize, diag: Diagnostic, place: (usize, usize)) -> Repair {
    let mut toks = toks.to_vec();
    let _dropped = toks.remove(at);
    Repair {
        toks,
        diag,
        must_pass: Some(place),
    }
}

/// The source text of a name followed by any `[...]` indices, starting at
/// token `at`.
fn operand_text<'s>(toks: &[Spanned], at: usize, source: &'s str) -> Option<&'s str> {
    let Some(Ok((start, _, mut end))) = toks.get(at) else {
        return None;
    };
    let mut depth = 0usize;
    for t in toks.get(at + 1..)? {
        let Ok((_, tok, r)) = t else { break };
        match tok {
            Tok::LBracket => depth += 1,
            Tok::RBracket if depth > 0 => depth -= 1,
            _ if depth == 0 => break,
            _ => (),
        }
        if depth == 0 {
            end = *r;
        }
    }
    source.get(*start..end)
}
