//! The VS Code extension's TextMate grammar (editors/vscode/syntaxes/cute.tmLanguage.json) names
//! exactly the language's builtins, scalar types and keywords: a builtin added to the front end
//! must be added to the grammar too.

use serde_json::Value;
use std::collections::BTreeSet;

const GRAMMAR: &str = include_str!("../../editors/vscode/syntaxes/cute.tmLanguage.json");

/// The alternatives of the first `\b(a|b|c)\b` group of a `match` pattern.
fn alternatives(pattern: &Value) -> BTreeSet<String> {
    let regex = pattern["match"].as_str().expect("a match pattern");
    let group = regex.split_once("\\b(").and_then(|(_, rest)| rest.split_once(")\\b")).expect("a \\b(...)\\b group").0;
    group.split('|').map(str::to_string).collect()
}

fn grammar() -> Value {
    serde_json::from_str(GRAMMAR).expect("the grammar is JSON")
}

#[test]
fn builtins_are_the_front_ends() {
    let grammar = grammar();
    let expected: BTreeSet<String> = cute_lang::ide::builtin_functions().map(str::to_string).collect();
    assert_eq!(alternatives(&grammar["repository"]["builtins"]), expected);
    let dim3: BTreeSet<String> = cute_lang::ide::DIM3_NAMES.iter().map(|s| s.to_string()).collect();
    assert_eq!(alternatives(&grammar["repository"]["special"]), dim3);
}

#[test]
fn scalar_types_are_the_front_ends() {
    let grammar = grammar();
    let expected: BTreeSet<String> = cute_lang::types::Scalar::ALL.iter().map(|s| s.name().to_string()).collect();
    assert_eq!(alternatives(&grammar["repository"]["types"]["patterns"][0]), expected);
}

#[test]
fn keywords_are_the_lexers() {
    let grammar = grammar();
    let mut highlighted = BTreeSet::new();
    for pattern in grammar["repository"]["keywords"]["patterns"].as_array().unwrap() {
        highlighted.extend(alternatives(pattern));
    }
    for keyword in
        ["kernel", "fn", "host", "const", "let", "mut", "if", "else", "for", "in", "return", "launch", "true", "false"]
    {
        assert!(highlighted.contains(keyword), "keyword `{keyword}` is not highlighted");
        assert!(
            !matches!(cute_lang::lexer::Lexer::new(keyword).next(), Some(Ok((_, cute_lang::lexer::Tok::Ident(_), _)))),
            "`{keyword}` is not a keyword"
        );
    }
}
