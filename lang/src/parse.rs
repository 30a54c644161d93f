//! Parsing: source text to AST, with every failure turned into a diagnostic.

use crate::ast::File;
use crate::diag::Diagnostic;
use crate::grammar::FileParser;
use crate::lexer::{LexError, Lexer, Tok};
use crate::span::Span;
use lalrpop_util::ParseError;

/// How deep brackets may nest before parsing is refused. The LR parser keeps its own stack, but the
/// AST is walked recursively afterwards, so unbounded nesting would overflow the thread's stack.
pub const MAX_NESTING: usize = 256;

pub fn parse(source: &str) -> Result<File, Diagnostic> {
    check_nesting(source)?;
    FileParser::new().parse(Lexer::new(source)).map_err(|e| to_diagnostic(source, e))
}

fn check_nesting(source: &str) -> Result<(), Diagnostic> {
    let mut depth = 0usize;
    for (offset, tok, end) in Lexer::new(source).filter_map(Result::ok) {
        match tok {
            Tok::LParen | Tok::LBracket | Tok::LBrace => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(Diagnostic::error("brackets nest too deeply", Span::new(offset, end), format!("more than {MAX_NESTING} levels deep"))
                        .with_help("split the expression with `let` bindings"));
                }
            }
            Tok::RParen | Tok::RBracket | Tok::RBrace => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

fn expected_list(expected: &[String]) -> String {
    let mut names: Vec<&str> = expected.iter().map(|s| s.trim_matches('"')).collect();
    names.sort();
    names.dedup();
    let shown: Vec<String> = names.iter().take(8).map(|n| format!("`{n}`")).collect();
    let more = if names.len() > 8 { ", ..." } else { "" };
    format!("{}{more}", shown.join(", "))
}

fn to_diagnostic(source: &str, error: ParseError<usize, Tok, LexError>) -> Diagnostic {
    match error {
        ParseError::User { error } => {
            let d = Diagnostic::error(error.message.clone(), error.span, error.message);
            match error.help {
                Some(h) => d.with_help(h),
                None => d,
            }
        }
        ParseError::UnrecognizedToken { token: (l, tok, r), expected } => {
            // A missing `;` is the most common slip: point at where it belongs, not at the next line.
            if expected.iter().any(|e| e == "\";\"") {
                let prev_end = Lexer::new(source).filter_map(Result::ok).take_while(|(_, _, e)| *e <= l).last().map(|(_, _, e)| e);
                if let Some(at) = prev_end {
                    return Diagnostic::error(format!("expected `;`, found {tok}"), Span::new(at, at), "add `;` here")
                        .with_secondary(Span::new(l, r), "unexpected token");
                }
            }
            Diagnostic::error(format!("unexpected {tok}"), Span::new(l, r), "unexpected here")
                .with_help(format!("expected one of {}", expected_list(&expected)))
        }
        ParseError::UnrecognizedEof { location, expected } => {
            let at = location.min(source.len());
            Diagnostic::error("unexpected end of file", Span::new(at, at), "the file ends here")
                .with_help(format!("expected one of {}", expected_list(&expected)))
        }
        ParseError::InvalidToken { location } => Diagnostic::error("invalid token", Span::new(location, location + 1), "not a token"),
        ParseError::ExtraToken { token: (l, tok, r) } => Diagnostic::error(format!("unexpected {tok}"), Span::new(l, r), "extra token"),
    }
}
