//! The compile budget (issue 30): one counter of compile-time work across unrolled loops, inlined
//! calls, kernel instances, host loops and the instructions emitted, so that no short file can make
//! the front end or the back ends run for minutes or take gigabytes. The programs in `budget/` are
//! the multiplying ones (each once took from 18 minutes to more than 12 GB) and kernels
//! whose instructions took LLVM and ptxas from 9 s to over 10 minutes; now each ends with the
//! budget's error.

use cute_lang::imports::DiskLoader;
use cute_lang::sources::Sources;
use cute_lang::{front_end_files, front_end_with, Budget, DEFAULT_BUDGET};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// How much of the default budget the largest sample or bench kernel may use: the limit must leave
/// real programs room to grow. Nine twentieths (135,000 steps): samples/gemm_sm90_splitk.cute (90
/// kernel instances: five persistent tiles, the split-K kernels and the cluster reductions, x 4
/// layouts x bf16/f16) takes about 125,600 and builds in 13 s on the 2-core machine;
/// flash_attention_sm90.cute (ten instances: head dims 64 (two and three consumer warpgroups), 128,
/// 256 (80- and 64-key tiles) x bf16/f16; ping-pong at every head dim) about 120,000;
/// flash_attention_bwd_sm90.cute about 85,000; flash_attention_varlen_sm90.cute (six instances) about
/// 80,000, flash_attention_varlen_bwd_sm90.cute about 87,000; flash_attention_decode_sm90.cute and
/// flash_attention_decode_paged_sm90.cute (six instances each, two host functions) about 127,000
/// and 132,500: a seventh instance in either needs a file of its own. (A third, 100,000, until session 26 added the splitk
/// sample's 128x192 and narrow tiles; two fifths, 120,000, until session 27 added its narrow
/// N-major tiles.)
const SAMPLE_LIMIT: u64 = DEFAULT_BUDGET * 9 / 20;

/// The front end under `budget`, on a 64 MiB stack as `cutec` runs it; the rendered errors.
/// Imports are read from disk: an imported item counts where it is instantiated.
fn check(name: &str, src: &str, budget: Budget) -> Result<(), String> {
    let mut sources = Sources::new(name, src);
    let worker = std::thread::Builder::new().stack_size(64 << 20).spawn(move || {
        let r = front_end_files(&mut sources, &mut DiskLoader::default(), budget);
        r.map(drop).map_err(|ds| sources.render(&ds))
    });
    worker.expect("spawn the front end's thread").join().unwrap_or_else(|e| std::panic::resume_unwind(e))
}

fn sources(dir: &str) -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "cute"))
        .collect();
    files.sort();
    files.into_iter().map(|p| (p.display().to_string(), std::fs::read_to_string(&p).expect("readable"))).collect()
}

#[test]
fn every_sample_and_bench_kernel_fits_nine_twentieths_of_the_budget() {
    let files = [sources("../samples"), sources("../bench/kernels")].concat();
    assert!(files.len() > 30, "found only {} files", files.len());
    for (name, src) in files {
        if let Err(e) = check(&name, &src, Budget::with_limit(SAMPLE_LIMIT)) {
            panic!("{name} needs more than {SAMPLE_LIMIT} steps, 9/20 of the default compile budget:\n{e}");
        }
    }
}

/// Each of the programs stops with the budget's error under the default budget.
#[test]
fn the_multiplying_programs_stop_at_the_default_budget() {
    let programs = sources("tests/budget");
    assert_eq!(programs.len(), 7);
    let workers: Vec<_> = programs
        .into_iter()
        .map(|(name, src)| std::thread::spawn(move || (check(&name, &src, Budget::default()), name)))
        .collect();
    for w in workers {
        let (r, name) = w.join().expect("the check returns");
        let e = r.expect_err(&name);
        assert!(e.contains(&format!("this needs more than {DEFAULT_BUDGET} steps")), "{name}:\n{e}");
    }
}

/// The error as rendered, with a small budget so that it comes quickly: the outermost loop or
/// call is the primary label, the constructs inside it are labelled once each, and the help says
/// how to restructure and how to raise the limit.
#[test]
fn the_error_points_at_the_outermost_construct_that_multiplied() {
    for (name, src) in sources("tests/budget") {
        let short = std::path::Path::new(&name).file_name().and_then(|n| n.to_str()).expect("a file name").to_string();
        let e = check(&short, &src, Budget::with_limit(10_000)).expect_err(&name);
        insta::assert_snapshot!(short.trim_end_matches(".cute").to_string(), e);
    }
}

#[test]
fn raising_the_budget_lets_a_program_that_needs_it_through() {
    // 64 x 64 unrolled trips of a store: 4,096 stores in one kernel, about 190,000 steps (each
    // store's weight and its share of scheduling them all).
    let src = "kernel k(a: tensor<f32, gmem, (64):(1)>) {\n    for i in 0..64 {\n        for j in 0..64 {\n            a[j] = 1.0;\n        }\n    }\n}\n";
    assert!(check("t.cute", src, Budget::with_limit(100_000)).is_err());
    assert_eq!(check("t.cute", src, Budget::with_limit(250_000)), Ok(()));
}

#[test]
fn a_cancelled_elaboration_stops_at_its_first_step() {
    let (_, src) = sources("tests/budget").into_iter().find(|(n, _)| n.ends_with("loops4.cute")).expect("loops4");
    // Set before it starts: a run that checked the flag only now and then would reach the budget
    // first and report that instead.
    let budget = Budget { cancel: Some(Arc::new(AtomicBool::new(true))), ..Budget::default() };
    let ds = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || front_end_with(&src, budget).map(drop).expect_err("cancelled"))
        .expect("spawn")
        .join()
        .expect("returns");
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert!(cute_lang::elab::cancelled(&ds[0]), "{ds:?}");
}
