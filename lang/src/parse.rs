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
    parse_at(source, 0)
}

/// [`parse`] with every span moved by `base`: a file placed in a program's span space
/// ([`crate::sources::Sources`]).
pub(crate) fn parse_at(source: &str, base: usize) -> Result<File, Diagnostic> {
    check_nesting(source).map_err(|d| d.shifted(base))?;
    let tokens = Lexer::new(source).map(|t| t.map(|(l, tok, r)| (l + base, tok, r + base)));
    // Errors are made in the file's own offsets (lexical ones are already), then moved.
    FileParser::new().parse(tokens).map_err(|e| to_diagnostic(source, e.map_location(|l| l - base)).shifted(base))
}

/// Refuses sources whose brackets nest more than [`MAX_NESTING`] deep or whose AST could be more
/// than [`MAX_DEPTH`] deep. One pass over the tokens; lexical errors are left to the parser, which
/// stops at the first.
fn check_nesting(source: &str) -> Result<(), Diagnostic> {
    let mut bound = DepthBound::new();
    for (offset, tok, end) in Lexer::new(source).filter_map(Result::ok) {
        let span = Span::new(offset, end);
        if matches!(tok, Tok::LParen | Tok::LBracket | Tok::LBrace) && bound.groups.len() > MAX_NESTING {
            return Err(Diagnostic::error(
                "brackets nest too deeply",
                span,
                format!("more than {MAX_NESTING} levels deep"),
            )
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
/// `return`, `launch` or item. Only leaves, assignments and expression statements have none.
///
/// The tokens split into groups (between matching brackets) and groups into segments (at `,` and
/// `;`, and after a `}` that no `else` follows, where a new statement or item starts). No node
/// spans two segments of one group, so a path runs down a chain of nested segments and ends in
/// one leaf. Within a segment, binary operators split the tokens into operands; a path passes
/// through some of the segment's binary operators and keywords, then into one operand, where the
/// unary and postfix operators nest. So a segment's bound is its binary operators and keywords,
/// plus one for a statement without a keyword (only in a block or the file), plus the largest
/// operand: its unary and postfix tokens and the deepest group inside it (or one, for the leaf).
/// Summing binary operators over-counts siblings of a higher precedence (`a*b + c*d` counts 3 for
/// a depth of 2), which only the parser's precedence would tell apart. Telling a unary `-` from a
/// binary one by the token before it can only err on the safe side: a unary operator counted as
/// binary is still counted, and a binary one counted as unary merges two operands into one, whose
/// count covers both. Nodes are built only from the tokens before the first syntax error, where
/// brackets match, so mismatched brackets later on can only raise the bound.
struct DepthBound {
    /// The open groups, outermost (the file itself) first; never empty.
    groups: Vec<Group>,
    /// The previous token was a `}`: unless `else` follows, the next token starts a new segment.
    after_block: bool,
    /// The previous token ends an operand (a name, a literal, `)` or `]`), so a `-` is binary.
    after_operand: bool,
}

struct Group {
    /// Whether this group holds statements or items (a block, the file) rather than expressions.
    holds_statements: bool,
    /// The largest bound of the finished segments.
    best: usize,
    /// Binary operators and keywords of the current segment.
    spine: usize,
    /// Whether the current segment has a keyword that anchors its statement or item.
    keyword: bool,
    /// The largest bound of the finished operands of the current segment.
    operands: usize,
    /// Unary and postfix tokens (and blocks' `{`) of the current operand.
    operand: usize,
    /// The largest bound of the groups closed so far inside the current operand.
    inner: usize,
    /// Where the current segment starts, for the diagnostic.
    start: usize,
}

impl Group {
    fn new(holds_statements: bool, start: usize) -> Self {
        Group { holds_statements, best: 0, spine: 0, keyword: false, operands: 0, operand: 0, inner: 0, start }
    }

    fn operand_bound(&self) -> usize {
        self.operand + self.inner.max(1)
    }

    fn segment_bound(&self) -> usize {
        let wrapper = usize::from(self.holds_statements && !self.keyword);
        self.spine + wrapper + self.operands.max(self.operand_bound())
    }

    /// Ends the current operand at a binary operator.
    fn end_operand(&mut self) {
        self.operands = self.operands.max(self.operand_bound());
        self.operand = 0;
        self.inner = 0;
    }

    /// Refuses the segment once any path through it is too deep.
    fn check(&self, at: usize, what: &str) -> Result<(), Diagnostic> {
        if self.segment_bound() <= MAX_DEPTH {
            return Ok(());
        }
        Err(Diagnostic::error(
            format!("{what} too deeply nested"),
            Span::new(self.start, at.max(self.start)),
            format!("more than {MAX_DEPTH} levels deep"),
        )
        .with_help(
            "split long expressions with `let` bindings, and long `else if` chains or deep blocks into functions",
        ))
    }

    /// Ends the current segment.
    fn end_segment(&mut self, at: usize) -> Result<(), Diagnostic> {
        self.check(at, "code is")?;
        self.best = self.best.max(self.segment_bound());
        *self = Group { best: self.best, start: at, ..Group::new(self.holds_statements, at) };
        Ok(())
    }
}

impl DepthBound {
    fn new() -> Self {
        DepthBound { groups: vec![Group::new(true, 0)], after_block: false, after_operand: false }
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
            self.current().end_segment(span.start)?;
        }
        let after_operand = std::mem::replace(
            &mut self.after_operand,
            matches!(
                tok,
                Tok::Ident(_)
                    | Tok::Int(_)
                    | Tok::Float(_)
                    | Tok::Str(_)
                    | Tok::True
                    | Tok::False
                    | Tok::Underscore
                    | Tok::RParen
                    | Tok::RBracket
            ),
        );
        match tok {
            Tok::LParen | Tok::LBracket | Tok::LBrace => {
                let group = self.current();
                group.operand += 1;
                group.check(span.end, if *tok == Tok::LBrace { "statements are" } else { "expression" })?;
                self.groups.push(Group::new(*tok == Tok::LBrace, span.end));
            }
            Tok::RParen | Tok::RBracket | Tok::RBrace => {
                // The file itself is never closed: a stray closer only merges segments, which can
                // only raise the bound.
                if self.groups.len() > 1 {
                    if let Some(mut group) = self.groups.pop() {
                        group.end_segment(span.start)?;
                        let parent = self.current();
                        parent.inner = parent.inner.max(group.best);
                        parent.check(span.end, "code is")?;
                    }
                }
                self.after_block = *tok == Tok::RBrace;
            }
            Tok::Comma | Tok::Semi => self.current().end_segment(span.end)?,
            // Keywords that start a statement or an item (`fn` and `const` also appear in types and
            // parameters, where counting them only raises the bound).
            Tok::If
            | Tok::Else
            | Tok::For
            | Tok::While
            | Tok::Break
            | Tok::Continue
            | Tok::Let
            | Tok::Return
            | Tok::Launch
            | Tok::Kernel
            | Tok::Fn
            | Tok::Host
            | Tok::Tune
            | Tok::Const => {
                let group = self.current();
                group.keyword = true;
                group.spine += 1;
                group.check(span.end, "statements are")?;
            }
            // Unary and postfix operators nest inside one operand.
            Tok::Bang | Tok::Dot => {
                let group = self.current();
                group.operand += 1;
                group.check(span.end, "expression")?;
            }
            Tok::Minus if !after_operand => {
                let group = self.current();
                group.operand += 1;
                group.check(span.end, "expression")?;
            }
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
            | Tok::In => {}
            // Binary operators (and any token added later, conservatively): one more level above
            // the operands.
            _ => {
                let group = self.current();
                group.spine += 1;
                group.end_operand();
                group.check(span.end, "expression")?;
            }
        }
        Ok(())
    }

    fn finish(mut self, eof: usize) -> Result<(), Diagnostic> {
        // Unclosed groups end with the file, innermost first.
        while let Some(mut group) = self.groups.pop() {
            group.end_segment(eof)?;
            if let Some(parent) = self.groups.last_mut() {
                parent.inner = parent.inner.max(group.best);
                parent.check(eof, "code is")?;
            }
        }
        Ok(())
    }
}

fn expected_list(expected: &[String]) -> String {
    // Token classes read as what the user would write there.
    let mut names: Vec<&str> = expected
        .iter()
        .map(|s| match s.trim_matches('"') {
            "ident" => "a name",
            "int" => "an integer",
            "float" => "a number",
            "string" => "a string",
            other => other,
        })
        .collect();
    names.sort();
    names.dedup();
    let shown: Vec<String> = names
        .iter()
        .take(8)
        .map(|n| if n.starts_with("a ") || n.starts_with("an ") { n.to_string() } else { format!("`{n}`") })
        .collect();
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
                let prev_end =
                    Lexer::new(source).filter_map(Result::ok).take_while(|(_, _, e)| *e <= l).last().map(|(_, _, e)| e);
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
        ParseError::InvalidToken { location } => {
            Diagnostic::error("invalid token", Span::new(location, location + 1), "not a token")
        }
        ParseError::ExtraToken { token: (l, tok, r) } => {
            Diagnostic::error(format!("unexpected {tok}"), Span::new(l, r), "extra token")
        }
    }
}
