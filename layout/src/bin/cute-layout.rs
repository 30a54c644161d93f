//! `cute-layout eval EXPR | eval - | show EXPR [--svg FILE]`: the layout
//! algebra's CLI without the MLIR-linked `cutec` (same code as `cutec layout`).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut err = std::io::stderr();
    let code = cute_layout::cli::run(&args, &mut input, &mut out, &mut err);
    drop(out);
    std::process::exit(code);
}
