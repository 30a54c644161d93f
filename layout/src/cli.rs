//! `layout eval EXPR`, `layout eval -`, `layout show EXPR [--svg FILE]`.
//! `show` draws a layout, a `(tiler, TV layout)` pair, or an MMA atom / tiled
//! MMA (its A, B and C panels, as CuTe's `print_latex(tiled_mma)`).
//!
//! `args` start after the word `layout`. `eval -` reads one expression a line
//! and prints one result a line (`error: ...` for a failing one, and goes
//! on), so millions of cases run through one process.

use crate::expr::eval_str;
use crate::show::picture_of;
use std::io::{BufRead, Write};

const USAGE: &str = "usage: layout eval EXPR | layout eval - | layout show EXPR [--svg FILE]\n\
see docs/layout-algebra.md for the expression grammar";

/// Runs the CLI; returns the process exit code.
pub fn run(args: &[String], stdin: &mut dyn BufRead, stdout: &mut dyn Write, stderr: &mut dyn Write) -> i32 {
    match run_inner(args, stdin, stdout, stderr) {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(stderr, "error: {e}");
            2
        }
    }
}

fn run_inner(
    args: &[String],
    stdin: &mut dyn BufRead,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> std::io::Result<i32> {
    match args.first().map(String::as_str) {
        Some("eval") if args.len() == 2 && args[1] == "-" => {
            let mut line = String::new();
            loop {
                line.clear();
                if stdin.read_line(&mut line)? == 0 {
                    break;
                }
                let src = line.trim();
                if src.is_empty() {
                    writeln!(stdout)?;
                    continue;
                }
                match eval_str(src) {
                    Ok(v) => writeln!(stdout, "{v}")?,
                    Err(e) => writeln!(stdout, "error: {e}")?,
                }
            }
            stdout.flush()?;
            Ok(0)
        }
        Some("eval") if args.len() >= 2 => {
            let src = args[1..].join(" ");
            match eval_str(&src) {
                Ok(v) => {
                    writeln!(stdout, "{v}")?;
                    Ok(0)
                }
                Err(e) => {
                    writeln!(stderr, "error: {e}")?;
                    Ok(1)
                }
            }
        }
        Some("show") if args.len() >= 2 => {
            let mut svg: Option<&str> = None;
            let mut expr = Vec::new();
            let mut i = 1;
            while i < args.len() {
                if args[i] == "--svg" {
                    match args.get(i + 1) {
                        Some(f) => svg = Some(f),
                        None => {
                            writeln!(stderr, "error: --svg needs a file name\n{USAGE}")?;
                            return Ok(2);
                        }
                    }
                    i += 2;
                } else {
                    expr.push(args[i].as_str());
                    i += 1;
                }
            }
            let picture = match eval_str(&expr.join(" ")).and_then(|v| picture_of(&v)) {
                Ok(g) => g,
                Err(e) => {
                    writeln!(stderr, "error: {e}")?;
                    return Ok(1);
                }
            };
            match svg {
                Some(path) => {
                    if let Err(e) = std::fs::write(path, picture.to_svg()) {
                        writeln!(stderr, "error: cannot write {path}: {e}")?;
                        return Ok(1);
                    }
                    writeln!(stdout, "wrote {path} ({})", picture.summary())?;
                }
                None => write!(stdout, "{}", picture.to_text())?,
            }
            Ok(0)
        }
        _ => {
            writeln!(stderr, "{USAGE}")?;
            Ok(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_with(args: &[&str], input: &str) -> (i32, String, String) {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let mut inp = std::io::Cursor::new(input.as_bytes().to_vec());
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(&args, &mut inp, &mut out, &mut err);
        (code, String::from_utf8_lossy(&out).into_owned(), String::from_utf8_lossy(&err).into_owned())
    }

    #[test]
    fn eval_one() {
        let (c, o, _) = run_with(&["eval", "complement(4:1, 24)"], "");
        assert_eq!((c, o.as_str()), (0, "6:4\n"));
        let (c, _, e) = run_with(&["eval", "complement((2,2):(1,1), 8)"], "");
        assert_eq!(c, 1);
        assert!(e.starts_with("error: complement"), "{e}");
    }

    #[test]
    fn eval_stdin_one_line_each() {
        let (c, o, _) = run_with(&["eval", "-"], "size((4,8):(8,1))\nbogus(\ncoalesce((2,(1,6)):(1,(6,2)))\n");
        assert_eq!(c, 0);
        let lines: Vec<&str> = o.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], "32");
        assert!(lines[1].starts_with("error: "));
        assert_eq!(lines[2], "12:1");
    }

    #[test]
    fn show_text_and_usage() {
        let (c, o, _) = run_with(&["show", "(2,2):(1,2)"], "");
        assert_eq!(c, 0);
        assert!(o.contains('+') && o.contains('3'));
        let (c, _, e) = run_with(&[], "");
        assert_eq!(c, 2);
        assert!(e.contains("usage"));
    }
}
