//! Every example in the operations table of docs/layout-algebra.md evaluates
//! to the result the table shows.

use cute_layout::expr::eval_str;

#[test]
fn docs_table_examples_hold() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/layout-algebra.md");
    let Ok(doc) = std::fs::read_to_string(path) else {
        eprintln!("{path} not found; skipped");
        return;
    };
    let mut checked = 0;
    let mut bad = Vec::new();
    let start = doc.find("## Operations, one example each").expect("operations section");
    let section = &doc[start..];
    let end = section[3..].find("\n## ").map_or(section.len(), |k| k + 3);
    for line in section[..end].lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | operation | `example` | `result` |
        if cells.len() != 5 || !cells[2].starts_with('`') || !cells[3].starts_with('`') {
            continue;
        }
        let (expr, want) = (cells[2].trim_matches('`'), cells[3].trim_matches('`'));
        let got = eval_str(expr).map(|v| v.to_string()).unwrap_or_else(|e| format!("error: {e}"));
        if got != want {
            bad.push(format!("{expr}\n  doc  {want}\n  got  {got}"));
        }
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} examples found");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
