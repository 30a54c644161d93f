//! Completion: after a `.`, the methods and fields; inside a call, that builtin's named arguments
//! first; elsewhere the names in scope, the builtins, the scalar types and the keywords.
//!
//! While typing, the file rarely parses, so where the cursor is (after a dot, inside which call)
//! is read from the tokens before it, and the names in scope come from the last version of the
//! file that parsed (only its items when that version is not the current text, as positions in
//! it no longer match).

use crate::docs::{docs, Entry};
use cute_lang::ide::{builtin_functions, Analysis, DefKind, Definition, DIM3_NAMES};
use cute_lang::lexer::{Lexer, Tok};
use cute_lang::types::Scalar;
use lsp_types::{CompletionItem, CompletionItemKind, Documentation, MarkupContent, MarkupKind};

/// The keywords, and the words of types and launches that are written where a keyword would be.
const KEYWORDS: &[&str] = &[
    "kernel", "fn", "host", "const", "let", "mut", "if", "else", "for", "in", "step", "return", "while", "break",
    "continue", "launch", "true", "false", "tensor", "gmem", "smem", "rmem", "align", "grid", "block",
];

/// Where the cursor is, as the tokens before it tell.
#[derive(Debug, PartialEq)]
enum Context {
    /// In a comment or a string: nothing to complete.
    Nowhere,
    /// After `receiver.`: a method or field.
    Member,
    /// Anywhere else; inside the argument list of `callee` if there is one.
    Name { callee: Option<String> },
}

fn context(text: &str, offset: usize) -> Context {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let prefix = &text[..offset];
    let mut tokens = Vec::new();
    for token in Lexer::new(prefix) {
        match token {
            Ok(t) => tokens.push(t),
            // An unterminated string or comment reaches the cursor.
            Err(_) => return Context::Nowhere,
        }
    }
    let last_end = tokens.last().map_or(0, |t| t.2);
    if prefix[last_end..].lines().last().is_some_and(|l| l.contains("//")) {
        return Context::Nowhere;
    }
    // The name being typed is not context.
    if matches!(tokens.last(), Some((_, Tok::Ident(_), end)) if *end == offset) {
        tokens.pop();
    }
    if matches!(tokens.last(), Some((_, Tok::Dot, _))) {
        return Context::Member;
    }
    Context::Name { callee: enclosing_call(&tokens) }
}

/// The name called by the innermost unclosed `(` of the current statement.
fn enclosing_call(tokens: &[(usize, Tok, usize)]) -> Option<String> {
    let mut depth = 0usize;
    for (i, (_, tok, _)) in tokens.iter().enumerate().rev() {
        match tok {
            Tok::RParen | Tok::RBracket => depth += 1,
            Tok::LParen | Tok::LBracket if depth > 0 => depth -= 1,
            Tok::LParen => {
                return match tokens.get(i.checked_sub(1)?) {
                    Some((_, Tok::Ident(name), _)) => Some(name.clone()),
                    _ => None,
                };
            }
            Tok::LBracket | Tok::Semi | Tok::LBrace | Tok::RBrace => return None,
            _ => {}
        }
    }
    None
}

/// The completions at `offset` of `text`; `names` answers for the names in scope.
pub fn complete(text: &str, offset: usize, names: Option<&Analysis>, names_are_current: bool) -> Vec<CompletionItem> {
    let d = docs();
    match context(text, offset) {
        Context::Nowhere => Vec::new(),
        Context::Member => {
            let methods = d.methods.iter().map(|(n, e)| documented(n, CompletionItemKind::METHOD, e));
            let fields = d.fields.iter().map(|(n, e)| documented(n, CompletionItemKind::FIELD, e));
            sorted(methods.chain(fields).collect())
        }
        Context::Name { callee } => {
            let mut items: Vec<CompletionItem> = Vec::new();
            if let Some(callee) = &callee {
                for name in d.named_args(callee) {
                    items.push(CompletionItem {
                        label: format!("{name}:"),
                        kind: Some(CompletionItemKind::PROPERTY),
                        detail: Some(format!("named argument of `{callee}`")),
                        insert_text: Some(format!("{name}: ")),
                        sort_text: Some(format!("0{name}")),
                        ..Default::default()
                    });
                }
            }
            if let Some(analysis) = names {
                let defs: Vec<&Definition> =
                    if names_are_current { analysis.names_in_scope(offset) } else { analysis.items() };
                items.extend(defs.into_iter().map(defined));
            }
            let no_docs = Vec::new();
            for name in builtin_functions().chain(DIM3_NAMES) {
                items.push(documented(name, CompletionItemKind::FUNCTION, d.functions.get(name).unwrap_or(&no_docs)));
            }
            items.extend(Scalar::ALL.iter().map(|s| plain(s.name(), CompletionItemKind::STRUCT, "scalar type")));
            items.extend(KEYWORDS.iter().map(|k| plain(k, CompletionItemKind::KEYWORD, "keyword")));
            sorted(items)
        }
    }
}

/// One item per label (a name in scope hides a builtin of the same name), in a stable order.
fn sorted(mut items: Vec<CompletionItem>) -> Vec<CompletionItem> {
    let mut seen = std::collections::HashSet::new();
    items.retain(|i| seen.insert(i.label.clone()));
    items.sort_by(|a, b| (&a.sort_text, &a.label).cmp(&(&b.sort_text, &b.label)));
    items
}

fn plain(label: &str, kind: CompletionItemKind, detail: &str) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail: Some(detail.to_string()),
        sort_text: Some(format!("3{label}")),
        ..Default::default()
    }
}

fn documented(name: &str, kind: CompletionItemKind, entries: &[Entry]) -> CompletionItem {
    let doc = entries.iter().map(|e| format!("`{}`: {}", e.signature, e.doc)).collect::<Vec<_>>().join("\n\n");
    CompletionItem {
        label: name.to_string(),
        kind: Some(kind),
        detail: entries.first().map(|e| e.signature.clone()),
        documentation: (!doc.is_empty())
            .then_some(Documentation::MarkupContent(MarkupContent { kind: MarkupKind::Markdown, value: doc })),
        sort_text: Some(format!("2{name}")),
        ..Default::default()
    }
}

fn defined(def: &Definition) -> CompletionItem {
    let kind = match def.kind {
        DefKind::Kernel | DefKind::Host | DefKind::Helper => CompletionItemKind::FUNCTION,
        DefKind::Const | DefKind::ConstParam => CompletionItemKind::CONSTANT,
        DefKind::Param | DefKind::Let | DefKind::LetMut | DefKind::LoopVar => CompletionItemKind::VARIABLE,
    };
    CompletionItem {
        label: def.name.clone(),
        kind: Some(kind),
        detail: def.declared.clone(),
        sort_text: Some(format!("1{}", def.name)),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_end(text: &str) -> Context {
        context(text, text.len())
    }

    #[test]
    fn the_tokens_before_the_cursor_give_the_context() {
        assert_eq!(at_end("let s = size(t, mo"), Context::Name { callee: Some("size".into()) });
        assert_eq!(at_end("let s = make_layout((4, 8), "), Context::Name { callee: Some("make_layout".into()) });
        assert_eq!(at_end("let s = f(g(x), y); let t = "), Context::Name { callee: None });
        assert_eq!(at_end("let v = x.lo"), Context::Member);
        assert_eq!(at_end("let v = x."), Context::Member);
        assert_eq!(at_end("let v = 1; // a com"), Context::Nowhere);
        assert_eq!(at_end("print(\"abc"), Context::Nowhere);
    }

    #[test]
    fn named_arguments_come_first_inside_a_call() {
        let items = complete("host h() { let c = make_copy_atom(f32, ", 39, None, false);
        let labels: Vec<&str> = items.iter().take(2).map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["bits:", "op:"]);
    }
}
