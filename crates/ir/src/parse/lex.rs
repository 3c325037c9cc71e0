//! The lexer of the textual IR: words, `@globals`, numbers and punctuation,
//! each with its line, column and byte offset.

use super::ParseError;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Tok {
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

pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) line: usize,
    pub(super) col: usize,
    /// Byte offset of the token's first character: instructions get a
    /// span there, so a runtime error in user IR names its line.
    pub(super) offset: usize,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

pub(super) fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
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
