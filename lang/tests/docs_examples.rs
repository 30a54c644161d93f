//! The `.cute` examples in docs/language.md and docs/tutorial.md stay true: every ```` ```cute ````
//! block must parse (a whole file, or statements, which are parsed inside a kernel body), and every
//! ```` ```cute,check ```` block is a complete program that the whole front end must accept.

use cute_lang::{diag::render, front_end, parse};

struct Block {
    doc: &'static str,
    line: usize,
    check: bool,
    text: String,
}

/// The fenced blocks whose info string is `cute` or `cute,check`.
fn blocks(doc: &'static str, text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let info = match line.trim_end().strip_prefix("```") {
            Some(info) => info.trim(),
            None => continue,
        };
        let mut body = String::new();
        for (_, l) in lines.by_ref() {
            if l.trim_end() == "```" {
                break;
            }
            body.push_str(l);
            body.push('\n');
        }
        if info == "cute" || info == "cute,check" {
            out.push(Block { doc, line: i + 1, check: info == "cute,check", text: body });
        }
    }
    out
}

fn doc_blocks() -> Vec<Block> {
    let mut all = Vec::new();
    for (name, text) in [
        ("docs/language.md", include_str!("../../docs/language.md")),
        ("docs/tutorial.md", include_str!("../../docs/tutorial.md")),
    ] {
        let b = blocks(name, text);
        assert!(b.iter().any(|b| b.check), "{name} has no ```cute,check block");
        all.extend(b);
    }
    all
}

#[test]
fn every_cute_block_parses() {
    let mut failures = Vec::new();
    for b in doc_blocks() {
        if parse(&b.text).is_ok() {
            continue;
        }
        // A snippet of statements: parse it as a kernel body.
        let wrapped = format!("kernel snippet() {{\n{}}}\n", b.text);
        if let Err(d) = parse(&wrapped) {
            failures.push(format!("{}:{}:\n{}", b.doc, b.line, render("block.cute", &wrapped, &[d])));
        }
    }
    assert!(failures.is_empty(), "{} block(s) do not parse:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_checked_block_is_accepted() {
    let mut failures = Vec::new();
    let mut n = 0;
    for b in doc_blocks().into_iter().filter(|b| b.check) {
        n += 1;
        if let Err(ds) = front_end(&b.text) {
            failures.push(format!("{}:{}:\n{}", b.doc, b.line, render("block.cute", &b.text, &ds)));
        }
    }
    assert!(n >= 10, "only {n} checked blocks");
    assert!(failures.is_empty(), "{} checked block(s) fail:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn block_extraction() {
    let doc = "x\n```cute,check\nkernel k() {\n}\n```\n```text\nnot code\n```\n```cute\nlet a = 1;\n```\n";
    let b = blocks("t.md", doc);
    assert_eq!(b.len(), 2);
    assert!(b[0].check && !b[1].check);
    assert_eq!(b[0].line, 2);
    assert_eq!(b[1].text, "let a = 1;\n");
}
