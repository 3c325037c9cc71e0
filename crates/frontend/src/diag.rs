//! Diagnostics: the error values of the frontend, and their rendering.
//!
//! `render` is the only code that touches ariadne. It uses byte offsets,
//! clamps spans into the source so a label can never panic, and writes no
//! colour unless asked.

use adc_ir::Span;
use ariadne::{Config, IndexType, Label, Report, ReportKind, Source};

/// Whether a diagnostic stops compilation.
///
/// ```
/// # use adc_frontend::{Diagnostic, Severity};
/// # use adc_ir::Span;
/// let d = Diagnostic::warning("W0001", "unused variable `y`", Span::new(29, 30));
/// assert_eq!(d.severity, Severity::Warning);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Compilation stops.
    Error,
    /// Compilation goes on.
    Warning,
}

/// One error or warning: a code (`docs/errors.md`), a message, a source
/// span, and secondary labels and notes.
///
/// ```
/// # use adc_frontend::Diagnostic;
/// # use adc_ir::Span;
/// let d = Diagnostic::error("E0116", "unknown variable `y`", Span::new(28, 29))
///     .with_note("declare it before its use");
/// assert!(d.is_error());
/// assert_eq!(d.notes, ["declare it before its use"]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The diagnostic's code, `E0116` or `W0001`.
    pub code: &'static str,
    /// The main message.
    pub message: String,
    /// Where in the source (`Span::UNDEFINED` for none).
    pub span: Span,
    /// Secondary labels: (span, message).
    pub labels: Vec<(Span, String)>,
    /// Notes printed after the source lines: facts (a signature, what
    /// was expected).
    pub notes: Vec<String>,
    /// Suggestions printed after the notes, as `Help:` lines (rustc's
    /// `help:`): what to write instead.
    pub helps: Vec<String>,
}

impl Diagnostic {
    /// An error, without labels or notes.
    ///
    /// ```
    /// # use adc_frontend::{Diagnostic, Severity};
    /// # use adc_ir::Span;
    /// let d = Diagnostic::error("E0110", "expected `float`, found `double`", Span::new(3, 9));
    /// assert_eq!((d.severity, d.code), (Severity::Error, "E0110"));
    /// assert!(d.labels.is_empty() && d.notes.is_empty());
    /// ```
    pub fn error(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            span,
            labels: Vec::new(),
            notes: Vec::new(),
            helps: Vec::new(),
        }
    }

    /// A warning, without labels or notes.
    ///
    /// ```
    /// # use adc_frontend::Diagnostic;
    /// # use adc_ir::Span;
    /// let d = Diagnostic::warning("W0001", "unused variable `y`", Span::new(29, 30));
    /// assert!(!d.is_error());
    /// ```
    pub fn warning(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message, span)
        }
    }

    /// Adds a secondary label at `span`.
    ///
    /// ```
    /// # use adc_frontend::Diagnostic;
    /// # use adc_ir::Span;
    /// let d = Diagnostic::error("E0201", "`f` is defined twice", Span::new(40, 41))
    ///     .with_label(Span::new(7, 8), "first defined here");
    /// assert_eq!(d.labels, [(Span::new(7, 8), "first defined here".to_string())]);
    /// ```
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push((span, message.into()));
        self
    }

    /// Adds a note.
    ///
    /// ```
    /// # use adc_frontend::Diagnostic;
    /// # use adc_ir::Span;
    /// let d = Diagnostic::error("E0116", "unknown variable `y`", Span::new(28, 29))
    ///     .with_note("did you mean `x`?");
    /// assert_eq!(d.notes.len(), 1);
    /// ```
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Adds a suggestion: what to write instead.
    ///
    /// ```
    /// # use adc_frontend::Diagnostic;
    /// # use adc_ir::Span;
    /// let d = Diagnostic::error("E0005", "expected `;`", Span::new(9, 9))
    ///     .with_help("add `;` here");
    /// assert_eq!(d.helps, ["add `;` here"]);
    /// ```
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.helps.push(help.into());
        self
    }

    /// True for an error, false for a warning.
    ///
    /// ```
    /// # use adc_frontend::Diagnostic;
    /// # use adc_ir::Span;
    /// assert!(Diagnostic::error("E0116", "unknown variable `y`", Span::UNDEFINED).is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_col(source: &str, offset: u32) -> (usize, usize) {
    LineIndex::new(source).line_col(offset)
}

/// The offsets where lines start, so that many spans of one source are
/// located in logarithmic time each (code generation locates every checked
/// instruction; scanning from the start each time was quadratic).
pub struct LineIndex<'a> {
    source: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(source: &'a str) -> Self {
        let starts = std::iter::once(0)
            .chain(source.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { source, starts }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let mut offset = (offset as usize).min(self.source.len());
        while !self.source.is_char_boundary(offset) {
            offset -= 1;
        }
        // `starts[0]` is 0, so some line starts at or before `offset`.
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        (line, self.source[start..offset].chars().count() + 1)
    }
}

fn clamp(span: Span, source: &str) -> std::ops::Range<usize> {
    if !span.is_defined() {
        return source.len()..source.len();
    }
    let mut start = (span.start as usize).min(source.len());
    let mut end = (span.end as usize).min(source.len()).max(start);
    while !source.is_char_boundary(start) {
        start -= 1;
    }
    while !source.is_char_boundary(end) {
        end += 1;
    }
    start..end
}

#[derive(Clone, Copy, Debug, Default)]
pub struct RenderConfig {
    pub color: bool,
}

/// Renders diagnostics the way `adc` prints them: a header with
/// `file:line:col`, the source line and a caret, via ariadne.
pub fn render(diags: &[Diagnostic], path: &str, source: &str, config: RenderConfig) -> String {
    let mut out = Vec::new();
    // Built once: a line index per diagnostic made thousands of warnings
    // quadratic in the source's size.
    let lines = LineIndex::new(source);
    let mut cache = (path, Source::from(source));
    for d in diags {
        if !d.span.is_defined() {
            out.extend_from_slice(format!("error[{}]: {}\n", d.code, d.message).as_bytes());
            continue;
        }
        let range = clamp(d.span, source);
        let (line, col) = lines.line_col(range.start as u32);
        let kind = match d.severity {
            Severity::Error => ReportKind::Error,
            Severity::Warning => ReportKind::Warning,
        };
        let mut report = Report::build(kind, (path, range.clone()))
            .with_config(
                Config::default()
                    .with_color(config.color)
                    .with_index_type(IndexType::Byte),
            )
            .with_code(d.code)
            .with_message(format!("{} ({path}:{line}:{col})", d.message))
            .with_label(Label::new((path, range)).with_message(&d.message));
        for (span, msg) in &d.labels {
            report = report.with_label(Label::new((path, clamp(*span, source))).with_message(msg));
        }
        for note in &d.notes {
            report = report.with_note(note);
        }
        for help in &d.helps {
            report = report.with_help(help);
        }
        // Writing into a Vec cannot fail.
        let _ = report.finish().write(&mut cache, &mut out);
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::LineIndex;

    /// Every byte offset of a text with empty lines, a final newline and
    /// multi-byte characters: the index agrees with counting from the start.
    #[test]
    fn line_index_agrees_with_a_scan() {
        let source = "ab\n\nx é y\n  \u{1F600}z\nlast";
        let index = LineIndex::new(source);
        for offset in
            (0..=source.len() + 2).filter(|&o| o > source.len() || source.is_char_boundary(o))
        {
            let before = &source[..offset.min(source.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            assert_eq!(
                index.line_col(offset as u32),
                (line, col),
                "offset {offset}"
            );
        }
    }
}
