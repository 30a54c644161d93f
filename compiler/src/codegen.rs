//! A program's PTX: each kernel instance compiled in a module of its own, on as many threads as
//! there are cores, the results joined into one PTX module.
//!
//! LLVM's NVPTX back end (inside `gpu-module-to-binary`) compiles one module on one thread, and it
//! and our passes are most of a build's time, so one module per kernel is what lets a build use
//! the machine. Each thread has its own MLIR context (a context's diagnostics and IR are not
//! shared between threads); the threads start, and make their contexts, while the front end
//! runs. Kernels are handed out largest first and each thread takes the next one when it is done,
//! so the threads finish close together. Results are put back in kernel order, so the PTX does not
//! depend on which thread compiled what or when: `ptx_join` makes it exactly the PTX of the
//! kernels compiled as one module, and where it cannot, they are compiled as one module.

use crate::lower::CuteText;
use crate::pipeline::{module_to_ptx, CompileError, Session};
use crate::ptx_join;
use crate::timings::{KernelTimes, Timings};
use cute_abi::Arch;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Stack for a compiling thread: MLIR's parser and verifier recurse on the IR's nesting (the
/// front end's thread gets the same, cutec/src/main.rs).
const STACK_BYTES: usize = 64 << 20;

/// One module to compile to PTX.
struct Job {
    index: usize,
    text: String,
    file_name: String,
    arch: Arch,
    libdevice: Option<PathBuf>,
    /// The PTX ISA version the module needs beyond the target's.
    ptx_version: Option<u32>,
}

type Outcome = (usize, Result<String, CompileError>, KernelTimes);

/// Threads that compile modules to PTX, each with its own MLIR session.
pub struct Workers {
    jobs: Option<Sender<Job>>,
    outcomes: Receiver<Outcome>,
    threads: Vec<JoinHandle<()>>,
}

impl Workers {
    /// Starts one thread per core; each makes its MLIR session, then waits for modules.
    pub fn start() -> Workers {
        let count = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (jobs, queue) = channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let (report, outcomes) = channel::<Outcome>();
        let threads = (0..count)
            .filter_map(|_| {
                let (queue, report) = (queue.clone(), report.clone());
                std::thread::Builder::new().stack_size(STACK_BYTES).spawn(move || work(&queue, &report)).ok()
            })
            .collect();
        Workers { jobs: Some(jobs), outcomes, threads }
    }

    fn threads(&self) -> usize {
        self.threads.len()
    }

    /// Compiles the jobs, whose indices are 0 to their count, on the threads; the outcomes are in
    /// index order.
    fn run(&self, jobs: Vec<Job>) -> Vec<(Result<String, CompileError>, KernelTimes)> {
        let count = jobs.len();
        let mut slots: Vec<Option<(Result<String, CompileError>, KernelTimes)>> = (0..count).map(|_| None).collect();
        let sender = self.jobs.as_ref().expect("the workers are running");
        let mut sent = 0;
        for job in jobs {
            if sender.send(job).is_ok() {
                sent += 1;
            }
        }
        for _ in 0..sent {
            let Ok((index, result, times)) = self.outcomes.recv() else { break };
            slots[index] = Some((result, times));
        }
        slots
            .into_iter()
            .map(|s| {
                s.unwrap_or_else(|| {
                    (
                        Err(CompileError::Internal("a compiler thread stopped before finishing its kernel".into())),
                        KernelTimes::default(),
                    )
                })
            })
            .collect()
    }
}

impl Workers {
    /// Tells the threads there is nothing more to compile: each frees its MLIR session and ends.
    pub fn close(&mut self) {
        self.jobs = None;
    }
}

impl Drop for Workers {
    /// Closes and waits for the threads: process exit must not run LLVM's static destructors under
    /// a thread still inside LLVM.
    fn drop(&mut self) {
        self.close();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn work(queue: &Mutex<Receiver<Job>>, report: &Sender<Outcome>) {
    // MLIR's own thread pool would only compete with these threads for the cores.
    let session = Session::new().inspect(|s| s.context.enable_multi_threading(false));
    loop {
        let job = match queue.lock() {
            Ok(q) => q.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else { return };
        let mut times = KernelTimes::default();
        let result = match &session {
            Ok(s) => module_to_ptx(
                s,
                &job.text,
                &job.file_name,
                job.arch,
                job.libdevice.as_deref(),
                job.ptx_version,
                &mut times,
            ),
            Err(e) => Err(CompileError::Internal(format!("cannot create an MLIR context: {e:?}"))),
        };
        if report.send((job.index, result, times)).is_err() {
            return;
        }
    }
}

/// Compiles the program's kernels to one PTX module on `workers`. `libdevice` is linked into the
/// modules of kernels that call math functions.
pub fn ptx(
    workers: &Workers,
    cute: &CuteText,
    file_name: &str,
    arch: Arch,
    libdevice: Option<&Path>,
    timings: &mut Timings,
) -> Result<String, CompileError> {
    let kernels = cute.kernels.len();
    // Every part in the module's PTX version, so that the parts join (ptx_join.rs).
    let job = |index: usize, text: String, math: bool| Job {
        index,
        text,
        file_name: file_name.to_string(),
        arch,
        libdevice: if math { libdevice.map(Path::to_path_buf) } else { None },
        ptx_version: cute.ptx_version(),
    };
    let whole_program = |stage: &str, timings: &mut Timings| {
        let mut outcome = timings.time(stage, || workers.run(vec![job(0, cute.module(), cute.uses_math())]));
        let (result, times) = outcome.remove(0);
        timings.kernel("(one module)", &times);
        result
    };
    if kernels <= 1 {
        return whole_program("kernels to PTX", timings);
    }
    // Largest first, so that no thread starts a long kernel when the others are nearly done. The
    // last kernel's module carries the manifest: one module prints it after every kernel's globals,
    // as does the join.
    let mut order: Vec<usize> = (0..kernels).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(cute.kernels[i].text.len()));
    let jobs = order
        .iter()
        .map(|&i| {
            let k = &cute.kernels[i];
            job(i, cute.kernel_module(i, i == kernels - 1), k.uses_math)
        })
        .collect();
    let compiled = timings.time("kernels to PTX", || workers.run(jobs));
    timings.note(format!("{kernels} kernels, one module each, on {} threads", workers.threads().min(kernels)));
    let mut parts = Vec::with_capacity(kernels);
    let mut errors: Vec<CompileError> = Vec::new();
    for (kernel, (result, times)) in cute.kernels.iter().zip(compiled) {
        timings.kernel(&kernel.symbol, &times);
        match result {
            Ok(ptx) => parts.push(ptx),
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        return Err(merge_errors(errors));
    }
    match timings.time("join PTX", || ptx_join::join(&parts)) {
        Some(ptx) => Ok(ptx),
        None => whole_program("kernels to PTX as one module", timings),
    }
}

/// One error for several kernels' errors, in kernel order: MLIR's diagnostics are listed together,
/// as one module's would be; otherwise the first kernel's error.
fn merge_errors(errors: Vec<CompileError>) -> CompileError {
    if errors.iter().all(|e| matches!(e, CompileError::Mlir(_))) {
        return CompileError::Mlir(
            errors
                .into_iter()
                .flat_map(|e| if let CompileError::Mlir(lines) = e { lines } else { Vec::new() })
                .collect(),
        );
    }
    errors.into_iter().next().expect("at least one error")
}
