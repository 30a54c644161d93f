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

/// How deep the AST may become, as bounded from the tokens before parsing (see [`DepthBound`]).
///
/// Brackets are not the only source of depth: `1+1+...+1`, `- - -x`, `a.b.c...`, `a[0][0]...` and
/// `else if` chains nest the AST one level per operator or branch without any bracket. The AST's
/// `Drop` and every pass over it recurse, so a 100,000-term sum would overflow the stack; worse,
/// when such a file also has a syntax error, the parser drops the half-built tree itself. Hence a
/// bound on the tokens, checked before any tree exists. Real code stays far below it (a long
/// statement is a few dozen levels deep); the limit is what the recursive passes after parsing
/// can afford on a main thread's stack in a debug build, where elaboration takes several KiB of
/// stack a level.
pub const MAX_DEPTH: usize = 256;

pub fn parse(source: &str) -> Result<File, Diagnostic> {
    check_nesting(source)?;
    FileParser::new().parse(Lexer::new(source)).map_err(|e| to_diagnostic(source, e))
}

/// Refuses sources whose brackets nest more than [`MAX_NESTING`] deep or whose AST could be more
/// than [`MAX_DEPTH`] deep. One pass over the tokens; tokens after a lexical error are skipped (the
/// parser stops at that error).
fn check_nesting(source: &str) -> Result<(), Diagnostic> {
    let mut bound = DepthBound::new();
    for (offset, tok, end) in Lexer::new(source).filter_map(Result::ok) {
        let span = Span::new(offset, end);
        if matches!(tok, Tok::LParen | Tok::LBracket | Tok::LBrace) && bound.groups.len() > MAX_NESTING {
            return Err(Diagnostic::error("brackets nest too deeply", span, format!("more than {MAX_NESTING} levels deep"))
                .with_help("split the expression with `let` bindings"));
        }
        bound.token(&tok, span)?;
    }
    bound.finish(source.len())
}

/// An upper bound on the depth of every AST node the parser can build from a token stream,
/// computed on the tokens alone, in one pass and constant work per token.
///
/// Every expression or statement node on a root-to-leaf path of the AST has a token of its own: a
/// binary or unary operator, the `.` of a field or method, the `(` of a call or tuple, the `[` of
/// an index, the `{` of a block, the `if`, `else` or `for` of a branch, the keyword of a `let`,
/// `return`, `launch` or item. Only leaves, assignments and expression statements have none. The
/// tokens split into groups (between matching brackets) and groups into segments (at `,` and `;`,
/// and after a `}` that no `else` follows, where a new statement or item starts). No node spans two
/// segments of one group, so a path runs down a chain of nested segments and ends in one leaf;
/// along it, a segment of a block (or of the file) holds at most one statement without a keyword.
/// So the counted tokens of a segment, plus one if it is such a statement, plus the bound of the
/// deepest group inside it or one for the leaf, bound every path through it. The bound over-counts
/// operators that are siblings rather than nested (`a*b + c*d` counts 3 for a depth of 2), which
/// the parser's precedence would tell apart. Nodes are built only from the tokens before the first
/// syntax error, where brackets match, so mismatched brackets later on can only raise the bound.
struct DepthBound {
    /// The open groups, outermost (the file itself) first; never empty.
    groups: Vec<Group>,
    /// The previous token was a `}`: unless `else` follows, the next token starts a new segment.
    after_block: bool,
}

struct Group {
    /// Whether this group holds statements or items (a block, the file) rather than expressions.
    holds_statements: bool,
    /// The largest bound of the finished segments.
    best: usize,
    /// Counted tokens of the current segment.
    count: usize,
    /// Whether the current segment has a keyword that anchors its statement or item.
    keyword: bool,
    /// The largest bound of the groups closed so far inside the current segment.
    inner: usize,
    /// Where the current segment starts, for the diagnostic.
    start: usize,
}

impl Group {
    fn new(holds_statements: bool, start: usize) -> Self {
        Group { holds_statements, best: 0, count: 0, keyword: false, inner: 0, start }
    }

    fn segment_bound(&self) -> usize {
        let wrapper = usize::from(self.holds_statements && !self.keyword);
        self.count + wrapper + self.inner.max(1)
    }

    /// Ends the current segment, refusing it if any path through it is too deep.
    fn end_segment(&mut self, at: usize, what: &str) -> Result<(), Diagnostic> {
        let bound = self.segment_bound();
        if bound > MAX_DEPTH {
            return Err(Diagnostic::error(format!("{what} too deeply nested"), Span::new(self.start, at.max(self.start)), format!("more than {MAX_DEPTH} levels deep"))
                .with_help("split long expressions with `let` bindings, and long `else if` chains or deep blocks into functions"));
        }
        self.best = self.best.max(bound);
        self.count = 0;
        self.keyword = false;
        self.inner = 0;
        self.start = at;
        Ok(())
    }
}

impl DepthBound {
    fn new() -> Self {
        DepthBound { groups: vec![Group::new(true, 0)], after_block: false }
    }

    fn current(&mut self) -> &mut Group {
        if self.groups.is_empty() {
            self.groups.push(Group::new(true, 0));
        }
        let last = self.groups.len() - 1;
        &mut self.groups[last]
    }

    fn token(&mut self, tok: &Tok, span: Span) -> Result<(), Diagnostic> {
        if std::mem::take(&mut self.after_block) && *tok != Tok::Else {
            self.current().end_segment(span.start, "code is")?;
        }
        let what = match tok {
            Tok::LParen | Tok::LBracket | Tok::LBrace => {
                let group = self.current();
                group.count += 1;
                if group.segment_bound() > MAX_DEPTH {
                    group.end_segment(span.end, if *tok == Tok::LBrace { "statements are" } else { "expression" })?;
                }
                self.groups.push(Group::new(*tok == Tok::LBrace, span.end));
                return Ok(());
            }
            Tok::RParen | Tok::RBracket | Tok::RBrace => {
                // The file itself is never closed: a stray closer only merges segments, which can
                // only raise the bound.
                if self.groups.len() > 1 {
                    if let Some(mut group) = self.groups.pop() {
                        group.end_segment(span.start, "code is")?;
                        let parent = self.current();
                        parent.inner = parent.inner.max(group.best);
                    }
                }
                self.after_block = *tok == Tok::RBrace;
                return Ok(());
            }
            Tok::Comma | Tok::Semi => return self.current().end_segment(span.end, "code is"),
            // Names, literals and punctuation that builds no node of its own.
            Tok::Ident(_)
            | Tok::Int(_)
            | Tok::Float(_)
            | Tok::Str(_)
            | Tok::True
            | Tok::False
            | Tok::Underscore
            | Tok::Question
            | Tok::Colon
            | Tok::DotDot
            | Tok::Arrow
            | Tok::Assign
            | Tok::In => return Ok(()),
            // Keywords that start a statement or an item (`fn` and `const` also appear in types and
            // parameters, where counting them only raises the bound).
            Tok::If | Tok::Else | Tok::For | Tok::Let | Tok::Return | Tok::Launch | Tok::Kernel | Tok::Fn | Tok::Host | Tok::Const => {
                self.current().keyword = true;
                "statements are"
            }
            // Operators and `.`.
            _ => "expression",
        };
        let group = self.current();
        group.count += 1;
        // Refuse as soon as the bound is passed, without waiting for the segment's end.
        if group.segment_bound() > MAX_DEPTH {
            group.end_segment(span.end, what)?;
        }
        Ok(())
    }

    fn finish(mut self, eof: usize) -> Result<(), Diagnostic> {
        // Unclosed groups end with the file, innermost first.
        while let Some(mut group) = self.groups.pop() {
            group.end_segment(eof, "code is")?;
            if let Some(parent) = self.groups.last_mut() {
                parent.inner = parent.inner.max(group.best);
            }
        }
        Ok(())
    }
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
