//! Hostile input: every file, however broken, ends in diagnostics (or an AST), never in a panic, a
//! hang or a stack overflow.
//!
//! Parsing runs on a thread with a 256 KiB stack, far smaller than the 8 MiB of a main thread, so
//! any recursion in the parser (or in dropping its tree) that grows with the input overflows here
//! first. The whole front end then runs on a thread of a main thread's size: elaboration recurses
//! over the AST with several KiB of stack a level in debug builds, and what keeps it safe is the
//! depth the parser allows ([`cute_lang::parse::MAX_DEPTH`]). Everything runs under a time limit,
//! so a hang fails the test instead of stalling it.

use cute_lang::diag::render;
use cute_lang::parse::{MAX_DEPTH, MAX_NESTING};
use cute_lang::{front_end, parse, Diagnostic};
use std::sync::mpsc;
use std::time::Duration;

const SMALL_STACK: usize = 256 * 1024;
const MAIN_STACK: usize = 8 * 1024 * 1024;
const TIME_LIMIT: Duration = Duration::from_secs(120);

/// What a run of the front end ended in, with the diagnostics rendered as the user would see them.
#[derive(Debug)]
struct Outcome {
    parsed: Result<(), Diagnostic>,
    checked: Result<(), Vec<Diagnostic>>,
    rendered: String,
}

/// Runs `work` on a thread with `stack` bytes of stack, under the time limit.
fn on_thread<T: Send + 'static>(stack: usize, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let _ = tx.send(work());
        })
        .expect("spawn a worker thread");
    match rx.recv_timeout(TIME_LIMIT) {
        Ok(value) => {
            let _ = worker.join();
            value
        }
        // A closed channel means the worker panicked; a stack overflow aborts the whole process.
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the front end panicked: {:?}", worker.join().err()),
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("the front end did not finish within {TIME_LIMIT:?}"),
    }
}

/// Parses `source` on a small stack (dropping the AST there too: a deep AST's drop recurses), then
/// runs the whole front end, and renders every diagnostic.
fn run(source: String) -> Outcome {
    let source = std::sync::Arc::new(source);
    let for_parse = source.clone();
    let (parsed, mut rendered) = on_thread(SMALL_STACK, move || {
        let parsed = parse(&for_parse).map(drop);
        let text = parsed
            .as_ref()
            .err()
            .map_or(String::new(), |d| render("adversarial.cute", &for_parse, std::slice::from_ref(d)));
        (parsed, text)
    });
    let (checked, text) = on_thread(MAIN_STACK, move || {
        let checked = front_end(&source).map(drop);
        let text = checked.as_ref().err().map_or(String::new(), |ds| render("adversarial.cute", &source, ds));
        (checked, text)
    });
    rendered += &text;
    Outcome { parsed, checked, rendered }
}

/// Runs `source` and requires a parse error whose message contains `message`.
fn rejects(source: String, message: &str) -> Outcome {
    let outcome = run(source);
    match &outcome.parsed {
        Err(d) => assert!(d.message.contains(message), "expected `{message}`, got `{}`", d.message),
        Ok(()) => panic!("expected a parse error containing `{message}`"),
    }
    assert!(outcome.checked.is_err(), "front_end must fail where parse fails");
    assert!(outcome.rendered.contains("error: "), "{}", outcome.rendered);
    outcome
}

/// Runs `source` and requires only that it ends, whichever way.
fn survives(source: String) -> Outcome {
    let outcome = run(source);
    if outcome.parsed.is_err() || outcome.checked.is_err() {
        assert!(outcome.rendered.contains("error: "));
    }
    outcome
}

/// A deterministic pseudo-random stream (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn binary_garbage() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for len in [1, 7, 64, 4096, 65_536] {
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        survives(String::from_utf8_lossy(&bytes).into_owned());
    }
    // Printable garbage: mostly punctuation the lexer knows, in no sensible order.
    let alphabet = b"(){}[]<>,:;.?_=+-*/%!&|^\"'#@$~`\\0123456789abcxyz \n\t";
    let text: String = (0..100_000).map(|_| alphabet[rng.below(alphabet.len())] as char).collect();
    survives(text);
}

#[test]
fn non_utf8_goes_through_the_lossy_path() {
    let mut bytes = b"kernel k(a: tensor<f32, gmem, (?):(1)>) {\n    let i = ".to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82]);
    bytes.extend_from_slice(b";\n}\n");
    let source = String::from_utf8_lossy(&bytes).into_owned();
    let out = rejects(source, "unexpected character");
    assert!(out.rendered.contains('\u{fffd}'), "{}", out.rendered);
    // Invalid sequences everywhere, including inside strings and comments.
    let source = String::from_utf8_lossy(b"/* \xff */ const S = \"\xc0\xaf\"; // \xed\xa0\x80\n\xf8").into_owned();
    rejects(source, "unexpected character");
    let source = String::from_utf8_lossy(b"const S = \"\xc0\xaf\";").into_owned();
    assert!(run(source).parsed.is_ok(), "replacement characters are fine inside a string");
}

#[test]
fn nul_bytes() {
    rejects("kernel k() {\0}".to_string(), "unexpected character");
    rejects("\0".repeat(10_000), "unexpected character");
    // NUL inside a string is just a character; inside a comment it is skipped.
    assert!(run("const S = \"a\0b\"; /* \0 */ // \0\n".to_string()).parsed.is_ok());
}

#[test]
fn ten_thousand_nested_brackets() {
    for (open, close) in [("(", ")"), ("[", "]"), ("{", "}")] {
        let body = format!("{}1{}", open.repeat(10_000), close.repeat(10_000));
        rejects(format!("kernel k() {{ let x = {body}; }}"), "brackets nest too deeply");
        rejects(open.repeat(10_000), "brackets nest too deeply");
        // Closers alone are an error, not an underflow.
        rejects(close.repeat(10_000), "unexpected");
    }
    rejects(format!("kernel k() {{ let x = {}; }}", "f(".repeat(10_000)), "brackets nest too deeply");
    rejects(format!("kernel k() {{ let x = {}; }}", "([{".repeat(5_000)), "brackets nest too deeply");
    rejects(format!("kernel k() {{ {} }}", "if a { ".repeat(10_000)), "brackets nest too deeply");
    rejects(format!("kernel k(a: {}) {{}}", "fn(".repeat(10_000)), "brackets nest too deeply");
    rejects(format!("kernel k(a: tensor<f32, gmem, {}>) {{}}", "(".repeat(10_000)), "brackets nest too deeply");
    rejects(format!("kernel k() {{ let {} = 1; }}", "(".repeat(10_000)), "brackets nest too deeply");
}

/// Sources of every shape of depth, from `n` levels.
fn deep(shape: &str, n: usize) -> String {
    match shape {
        "parens" => format!("const X = {}1{};", "(".repeat(n), ")".repeat(n)),
        "calls" => format!("const X = {}1{};", "f(".repeat(n), ")".repeat(n)),
        "indices" => {
            format!("kernel k(a: tensor<i32, gmem, (?):(1)>) {{ a[0] = {}0{}; }}", "a[".repeat(n), "]".repeat(n))
        }
        "sum" => format!("kernel k(a: tensor<f32, gmem, (?):(1)>) {{ a[0] = {}; }}", vec!["a[0]"; n].join(" + ")),
        "negations" => format!("kernel k(a: tensor<f32, gmem, (?):(1)>) {{ a[0] = {}a[0]; }}", "-".repeat(n)),
        "fields" => format!("kernel k() {{ let x = thread_idx{}; }}", ".x".repeat(n)),
        "blocks" => format!("kernel k() {{ {}{} }}", "if true { ".repeat(n), "} ".repeat(n)),
        "else_if" => format!("kernel k() {{ if true {{ }}{} }}", " else if true { }".repeat(n)),
        _ => unreachable!("no shape {shape}"),
    }
}

const SHAPES: [&str; 8] = ["parens", "calls", "indices", "sum", "negations", "fields", "blocks", "else_if"];

#[test]
fn deep_but_within_the_limits_is_accepted() {
    // A quarter of the limit is still far deeper than any real program; every shape parses on the
    // small stack and goes through the whole front end on a main thread's stack.
    for shape in SHAPES {
        let out = run(deep(shape, MAX_DEPTH / 4));
        assert!(out.parsed.is_ok(), "{shape}: {:?}", out.parsed);
    }
    // The deepest each shape can be and still parse: its front end must not overflow either.
    for shape in SHAPES {
        let mut n = MAX_DEPTH;
        while n > 0 && parse(&deep(shape, n)).is_err() {
            n -= 1;
        }
        assert!(n >= MAX_DEPTH / 4, "{shape}: only {n} levels parse");
        assert!(run(deep(shape, n)).parsed.is_ok());
        let past = run(deep(shape, n + 1));
        let message = past.parsed.expect_err("one level more is refused").message;
        assert!(message.contains("too deeply") || message.contains("nest too deeply"), "{shape}: {message}");
    }
}

#[test]
fn past_the_limits_is_refused() {
    for shape in SHAPES {
        let out = run(deep(shape, MAX_NESTING + 1));
        let message = out.parsed.expect_err("past the limit").message;
        assert!(message.contains("too deeply"), "{shape}: {message}");
    }
}

/// Long operator chains nest the AST one level per operator without a single bracket.
#[test]
fn long_chains_without_brackets() {
    let n = 100_000;
    let sum = vec!["1"; n].join(" + ");
    rejects(format!("const X = {sum};"), "expression too deeply nested");
    // The same chain with a syntax error after it: the parser must not have built the tree either.
    rejects(format!("const X = {sum} +;"), "expression too deeply nested");
    rejects(format!("kernel k() {{ let x = {sum} }}"), "expression too deeply nested");
    rejects(format!("const X = {}x;", "-".repeat(n)), "expression too deeply nested");
    rejects(format!("const X = {}x;", "!".repeat(n)), "expression too deeply nested");
    rejects(format!("const X = {}x;", "- ".repeat(n)), "expression too deeply nested");
    rejects(format!("const X = a{};", ".b".repeat(n)), "expression too deeply nested");
    rejects(format!("const X = a{};", ".m()".repeat(n)), "expression too deeply nested");
    rejects(format!("const X = a{};", "[0]".repeat(n)), "expression too deeply nested");
    rejects(format!("const X = a{};", "[0, 1][_]".repeat(n)), "expression too deeply nested");
    rejects(format!("const X = {};", vec!["a"; n].join(" < ")), "expression too deeply nested");
    rejects(format!("const X = {};", vec!["a"; n].join(" || ")), "expression too deeply nested");
    let mixed: String = (0..n).map(|i| ["a + ", "b * ", "-c - ", "d.e << ", "f[0] && "][i % 5]).collect();
    rejects(format!("const X = {mixed}z;"), "expression too deeply nested");
}

#[test]
fn long_else_if_chains() {
    let n = 100_000;
    let chain = format!("if a {{ }}{} else {{ }}", " else if a { }".repeat(n));
    rejects(format!("kernel k() {{ {chain} }}"), "too deeply nested");
    // Unfinished after the chain: the chain is complete, then the file ends.
    rejects(format!("kernel k() {{ {chain} "), "too deeply nested");
    // Chains nested inside chains: each level short, the whole deep.
    let level = format!("if a {{ }}{} else {{ ", " else if a { }".repeat(200));
    rejects(format!("kernel k() {{ {}{} }}", level.repeat(100), "}".repeat(100)), "too deeply nested");
}

#[test]
fn wide_but_shallow_is_accepted() {
    // Many siblings are not depth: 20,000 arguments, statements and items all parse.
    let args = vec!["a + b * c"; 20_000].join(", ");
    assert!(run(format!("const X = f({args});")).parsed.is_ok());
    let stmts = "let x = a + b * c - d; if x < 1 { } else if x < 2 { } else { }\n".repeat(20_000);
    assert!(run(format!("kernel k() {{ {stmts} }}")).parsed.is_ok());
    assert!(run("const X = 1 + 2 + 3 + 4;\n".repeat(20_000)).parsed.is_ok());
    // A long expression: a 200-term sum is deep but within the limit.
    let sum = vec!["a[0]"; 200].join(" + ");
    assert!(run(format!("kernel k(a: tensor<f32, gmem, (?):(1)>) {{ a[0] = {sum}; }}")).checked.is_ok());
}

#[test]
fn huge_literals() {
    rejects(format!("const X = {};", "9".repeat(10_000)), "integer literal too large");
    rejects("const X = 9223372036854775808;".to_string(), "integer literal too large");
    assert!(run("const X = 9223372036854775807;".to_string()).parsed.is_ok());
    rejects(format!("const X = 0x{};", "f".repeat(10_000)), "hexadecimal literal too large");
    rejects("const X = 0x;".to_string(), "hexadecimal literal without digits");
    rejects("const X = 0x8000000000000000;".to_string(), "hexadecimal literal too large");
    rejects("const X = 1e999;".to_string(), "floating-point literal out of range");
    rejects(format!("const X = {}.0;", "9".repeat(400)), "floating-point literal out of range");
    // Underflow rounds to zero, which is a fine value.
    assert!(run("const X = 1e-999;".to_string()).parsed.is_ok());
    assert!(run(format!("const X = 0.{}1;", "0".repeat(10_000))).parsed.is_ok());
    assert!(run(format!("const X = {};", "1_".repeat(5_000))).parsed.is_err());
    rejects(format!("kernel k(a: tensor<f32, gmem, ({}):(1)>) {{}}", "9".repeat(100)), "integer literal too large");
}

#[test]
fn unterminated_comments_and_strings() {
    rejects("/*".to_string(), "unterminated block comment");
    rejects("/* /* */".to_string(), "unterminated block comment");
    rejects(format!("kernel k() {{ {} }}", "/*".repeat(100_000)), "unterminated block comment");
    rejects(format!("{}x{}", "/*".repeat(50_000), "*/".repeat(49_999)), "unterminated block comment");
    // Closed as often as opened: all of it is one comment, and an empty file is a fine file.
    assert!(run(format!("{}x{}", "/*".repeat(50_000), "*/".repeat(50_000))).parsed.is_ok());
    rejects("const S = \"abc".to_string(), "unterminated string literal");
    rejects("const S = \"abc\ndef\";".to_string(), "unterminated string literal");
    rejects("const S = \"\\".to_string(), "unterminated string literal");
    rejects("const S = \"\\q\";".to_string(), "unknown escape");
    rejects(format!("const S = \"{}", "x".repeat(1_000_000)), "unterminated string literal");
    rejects("//".to_string() + &"x".repeat(1000) + "\n const", "unexpected end of file");
}

#[test]
fn very_long_lines() {
    let ident = "x".repeat(1_000_000);
    rejects(format!("kernel k() {{ let y = {ident}; z }}"), "expected `;`");
    let out = run(format!("kernel k() {{ {} }}", "let y = thread_idx.x; ".repeat(50_000)));
    assert!(out.checked.is_ok(), "{}", out.rendered);
    rejects(format!("{} @", " ".repeat(1_000_000)), "unexpected character");
    survives(";".repeat(1_000_000));
    survives(format!("kernel k() {{ {} }}", ";".repeat(1_000_000)));
}

#[test]
fn a_megabyte_of_random_tokens() {
    let tokens = [
        "kernel", "fn", "host", "let", "if", "else", "for", "in", "return", "const", "launch", "true", "false", "(",
        ")", "{", "}", "[", "]", "<", ">", ",", ":", ";", ".", "..", "->", "?", "_", "=", "+", "-", "*", "/", "%", "!",
        "&", "|", "^", "&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "x", "a", "tensor", "f32", "gmem", "0", "42",
        "1.5", "0x1f", "\"s\"", "step", "grid",
    ];
    for seed in 1..=3u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut text = String::with_capacity(1 << 20);
        while text.len() < 1 << 20 {
            text.push_str(tokens[rng.below(tokens.len())]);
            text.push(if rng.below(16) == 0 { '\n' } else { ' ' });
        }
        survives(text);
    }
    // Random tokens inside a valid frame, so the parser gets further before the first error.
    let mut rng = Rng(7);
    let body: Vec<&str> =
        (0..200_000).map(|_| ["a", "+", "(", ")", "[", "]", ".", "b", "1", ",", "-", "*"][rng.below(12)]).collect();
    survives(format!("kernel k() {{ let x = {}; }}", body.join(" ")));
}
