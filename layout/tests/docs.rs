//! Every example in the operations table of docs/layout-algebra.md evaluates
//! to the result the table shows.

use cute_layout::expr::eval_str;

#[test]
fn docs_table_examples_hold() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/layout-algebra.md");
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

/// Every `$ cute-layout eval|show '...'` (or `$ cutec layout ...`) transcript
/// in docs/layout-algebra.md prints what the document shows after it, through
/// the CLI itself (trailing spaces aside).
#[test]
fn docs_transcripts_hold() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/layout-algebra.md");
    let Ok(doc) = std::fs::read_to_string(path) else {
        eprintln!("{path} not found; skipped");
        return;
    };
    let lines: Vec<&str> = doc.lines().collect();
    let (mut checked, mut bad) = (0, Vec::new());
    for (k, line) in lines.iter().enumerate() {
        let Some(cmd) = line.strip_prefix("$ cute-layout ").or_else(|| line.strip_prefix("$ cutec layout ")) else {
            continue;
        };
        let Some((verb, quoted)) = cmd.split_once(' ') else { continue };
        let Some(expr) = quoted.strip_prefix('\'').and_then(|q| q.strip_suffix('\'')) else { continue };
        // The output: the lines up to the next command or the end of the block.
        let want: Vec<&str> = lines[k + 1..]
            .iter()
            .take_while(|l| !l.starts_with("$ ") && !l.starts_with("```"))
            .map(|l| l.trim_end())
            .collect();
        let args = [verb.to_string(), expr.to_string()];
        let (mut out, mut err) = (Vec::new(), Vec::new());
        cute_layout::cli::run(&args, &mut std::io::empty(), &mut out, &mut err);
        let got = String::from_utf8_lossy(&out).into_owned() + &String::from_utf8_lossy(&err);
        let got: Vec<&str> = got.lines().map(str::trim_end).collect();
        if got != want {
            bad.push(format!("{line}\n  doc  {}\n  got  {}", want.join("\n       "), got.join("\n       ")));
        }
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} transcripts found");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
