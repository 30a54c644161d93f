#!/usr/bin/env python3
"""cutec beside PyTorch, Triton and NVIDIA CuTe DSL: every sample host function that computes on
tensors, timed with one method in one run.

On the GPU machine (scripts/gpu-suite/python.sh does all of this; docs/python.md, "The benchmark"):
    python3 -m pip install --no-index --no-deps cutec-*.whl        # the cutec extension
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
                                                                    # optional: CuTe DSL 4.3.5 + apache-tvm-ffi
    python3 bench/bench.py --cubins DIR --out $OUT/bench.json      # DIR: the samples' cubins

What it measures (each case: check against a torch reference on fresh random inputs, output
poisoned with NaN first, then timing):
  copy       torch dst.copy_(src) on 1 GiB (the bandwidth reference); GB/s = 2*bytes/t
  add        C = A + B, fp16/fp32, 2048^2, 8192^2, 16384^2: torch add(out=), Triton (BLOCK
             1024..4096), CuTe DSL seed kernels (naive/vectorized/TV layout from seed 003,
             naive/vectorized from seed 004, TV once more through TVM-FFI), cutec's
             samples/elementwise_add{,_f32}.cute (naive, vec, tv), samples/fast_add.cute
             (fast) and, in f32, samples/predicated_add.cute; GB/s = 3*numel*bytes/t.
             torch's peer row is add(out=c) into the rotated outputs; `a+b` is shown but is
             not a peer (its output is one L2-resident block from the caching allocator)
  apply      C = A * B and relu(A * B), fp16, same shapes: torch, Triton, cutec's
             samples/elementwise_apply.cute and samples/fast_add.cute's fast_mul{,_relu};
             GB/s = 3*numel*2/t
  reduce     row sum of fp32 MxN (4096x4096, 16384x8192, 65536x256, 16384x1024): torch.sum,
             Triton, CuTe DSL seed 000 (simple, ReduceSumTiledCopy), cutec's reduce_sum (any
             shape), row_sum and fast_row_sum (samples/row_sum.cute) and, where N = 1024,
             reduce_rows and reduce_compositional; GB/s = M*N*4/t
  reduce_nd  sum over the middle mode of BxRxA fp32 (R = 256): torch.sum(dim=1), cutec's
             reduce_nd; GB/s = B*R*A*4/t
  gemm       C = A @ B (bf16, f16; C of the input type), 4096^3 and 8192^3: torch.matmul
             (cuBLAS), cutec's samples/gemm_sm80.cute (TN, NT, NN) and samples/gemm_sm90.cute
             (wgmma, every layout; variant "sm90 gemm_*"); TFLOP/s = 2*M*N*K/t
  compile    wall time of cute.compile (first and second), Triton first call (fresh cache)
  launch     host time per call on a tiny 16x256 fp32 add: the median of 7 rounds of 1000
             back-to-back calls (cutec's goal: <= 4 us per call from Python with torch tensors)
Not timed: the samples that only print (hello_world, printing, layout_algebra, numeric_types,
tensor_ssa, tensors, four_ways_copy, cuda_graph) and mma_atom (one 16x8x16 MMA).
Timing: CUDA events around every call, a sleep kernel in front of each batch so the host has queued
the batch before the GPU reaches it, warm-up, median of many calls, inputs rotated over enough
buffer sets to cover 4x the L2 cache (so every call reads from HBM, as the peers' method has it).
cutec calls go on torch's current stream (the extension's default when torch is imported), like
every peer's.

Each section runs in its own child process (a crash or a sticky CUDA error costs only that
section's remaining cases; the parent relaunches the child, skipping finished cases and the case
that crashed). Every case is guarded: one failure never stops the others. Results go to --out
(JSON); the tables are printed last: GB/s (TFLOP/s for gemm) per implementation and shape, and
for cutec the ratio to the best peer in that column.

CPU-only checks (no GPU needed):
    --cpu-selftest  compile every CuTe DSL kernel down to a sm_90a cubin (the run stops where a GPU
                    is needed), run the Triton kernels in the Triton interpreter against torch,
                    format a sample table
    --cpu-flow      the whole parent/child flow on tiny CPU tensors with host timers (Triton
                    interpreted; CuTe DSL and cutec fail where they need a GPU)
"""

import argparse
import contextlib
import io
import json
import math
import os
import shutil
import site
import statistics
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
T0 = time.time()

SECTIONS = ["compile", "copy", "add", "apply", "reduce", "reduce_nd", "gemm", "launch"]
# soft time shares (s) per section; unused time carries over to later sections
SECTION_SHARE = {
    "compile": 50,
    "copy": 10,
    "add": 120,
    "apply": 50,
    "reduce": 70,
    "reduce_nd": 20,
    "gemm": 40,
    "launch": 40,
}

ADD_SHAPES = [(2048, 2048), (8192, 8192), (16384, 16384)]
ADD_DTYPES = ["float16", "float32"]
REDUCE_SHAPES = [(4096, 4096), (16384, 8192), (65536, 256), (16384, 1024)]
REDUCE_ND_SHAPES = [(64, 256, 1024), (1024, 256, 64)]
GEMM_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192)]
COPY_BYTES = 1 << 30
TINY_SHAPE = (16, 256)  # smallest shape every CuTe add variant accepts

# tiny stand-ins for --cpu-flow (same divisibility as the real shapes)
CPU_ADD_SHAPES = [(16, 256), (32, 512)]
CPU_REDUCE_SHAPES = [(8, 256), (4, 512)]
CPU_REDUCE_ND_SHAPES = [(2, 256, 4)]
CPU_GEMM_SHAPES = [(128, 256, 64)]
CPU_COPY_BYTES = 1 << 20

CUTE_ADD_VARIANTS = {  # variant -> function name in cute_seed.py
    "naive003": "naive_elementwise_add",
    "vec003": "vectorized_elementwise_add",
    "tv003": "elementwise_add",
    "naive004": "naive_elementwise_add_004",
    "vec004": "vectorized_add",
}
CUTE_REDUCE_VARIANTS = ["simple000", "tiledcopy000"]
# cutec's GEMM host functions (samples/gemm_sm80.cute: tn, nt, nn; samples/gemm_sm90.cute: all
# four) by operand layout: how A and B are stored
# (row-major) and C = X @ Y of the stored operands (torch.matmul gets X and Y, cutec's host the
# logical operands A = X (M, K) and B = Y^T (N, K): no copies, only views).
GEMM_LAYOUTS = {
    "tn": (lambda M, N, K: ((M, K), (N, K)), lambda a, b: (a, b.t())),
    "nt": (lambda M, N, K: ((K, M), (K, N)), lambda a, b: (a.t(), b)),
    "nn": (lambda M, N, K: ((K, M), (N, K)), lambda a, b: (a.t(), b.t())),
    "tt": (lambda M, N, K: ((M, K), (K, N)), lambda a, b: (a, b)),
}
CUTEC_ADD_HOSTS = {  # variant -> host function in samples/elementwise_add{,_f32}.cute
    "naive": "naive_elementwise_add",
    "vec": "vectorized_elementwise_add",
    "tv": "elementwise_add",
}

TOL = {"float16": 2e-3, "float32": 1e-5, "reduce": 1e-4, "bfloat16": 4 * 2.0**-7}


def log(*a):
    print(f"[{time.time() - T0:7.1f}s]", *a, flush=True)


class Mismatch(Exception):
    def __init__(self, msg, relerr):
        super().__init__(msg)
        self.relerr = relerr


# ----------------------------------------------------------------------------
# environment / imports
# ----------------------------------------------------------------------------
def activate_target_site():
    """`pip install --target DIR` + PYTHONPATH=DIR does not run DIR's .pth files,
    and nvidia-cutlass-dsl needs its .pth (it puts .../python_packages, where the
    `cutlass` package lives, on sys.path). site.addsitedir runs them."""
    added = []
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p and os.path.isdir(p) and any(f.endswith(".pth") for f in os.listdir(p)):
            before = set(sys.path)
            site.addsitedir(p)
            added += [x for x in sys.path if x not in before]
    return added


class CutecModules:
    """The samples' cubins, loaded on first use: host(cubin, name) is a cutec.HostFunction."""

    def __init__(self, cutec, folder):
        self.cutec, self.folder, self.loaded = cutec, folder, {}

    def module(self, cubin):
        if cubin not in self.loaded:
            self.loaded[cubin] = self.cutec.load(os.path.join(self.folder, cubin + ".cubin"))
        return self.loaded[cubin]

    def host(self, cubin, name):
        return self.module(cubin).host(name)


class Env:
    """Lazily imported modules plus the device abstraction (cuda or cpu)."""

    def __init__(self, cpu):
        self.cpu = cpu
        self.import_s = {}
        self.import_err = {}
        t = time.time()
        import torch

        self.torch = torch
        self.import_s["torch"] = time.time() - t
        self.device = "cpu" if cpu else "cuda"
        if not cpu and not torch.cuda.is_available():
            raise RuntimeError("torch.cuda.is_available() is False (use --cpu-flow on a machine without GPU)")
        self.triton = self.TP = None
        try:
            t = time.time()
            import triton
            import triton_peers

            self.triton, self.TP = triton, triton_peers
            self.import_s["triton"] = time.time() - t
        except Exception as e:
            self.import_err["triton"] = f"{type(e).__name__}: {e}"
        self.cute = self.cutlass = self.S = self.from_dlpack = self.cudrv = None
        self.tvm_ffi = None
        try:
            t = time.time()
            import cutlass
            import cutlass.cute as cute
            from cutlass.cute.runtime import from_dlpack
            import cuda.bindings.driver as cudrv

            self.import_s["cutlass"] = time.time() - t
            t = time.time()
            import cute_seed

            self.import_s["cute_seed"] = time.time() - t
            self.cutlass, self.cute, self.from_dlpack, self.cudrv, self.S = cutlass, cute, from_dlpack, cudrv, cute_seed
        except Exception as e:
            self.import_err["cutlass"] = f"{type(e).__name__}: {e}"
        try:
            import tvm_ffi

            self.tvm_ffi = tvm_ffi
        except Exception as e:
            self.import_err["tvm_ffi"] = f"{type(e).__name__}: {e}"
        # cutec's cubins (CUTEC_CUBINS, set from --cubins), called through the cutec extension
        self.cutec = None
        try:
            t = time.time()
            import cutec

            self.import_s["cutec"] = time.time() - t
            if not os.environ.get("CUTEC_CUBINS"):
                raise RuntimeError("no --cubins folder given")
            self.cutec = CutecModules(cutec, os.environ["CUTEC_CUBINS"])
        except Exception as e:
            self.import_err["cutec"] = f"{type(e).__name__}: {e}"
        if cpu:
            self.l2 = 50 * 1024 * 1024
        else:
            p = torch.cuda.get_device_properties(0)
            self.l2 = int(getattr(p, "L2_cache_size", 0) or 50 * 1024 * 1024)

    def dt(self, name):
        return getattr(self.torch, name)

    def sync(self):
        if not self.cpu:
            self.torch.cuda.synchronize()

    def stream(self):
        """CUstream of torch's current stream (the legacy default stream, 0, unless changed)."""
        h = 0 if self.cpu else self.torch.cuda.current_stream().cuda_stream
        return self.cudrv.CUstream(h)

    def need(self, what):
        if what == "triton" and self.TP is None:
            raise RuntimeError("triton unavailable: " + self.import_err.get("triton", "?"))
        if what == "cute" and self.cute is None:
            raise RuntimeError("CuTe DSL unavailable: " + self.import_err.get("cutlass", "?"))
        if what == "cutec" and self.cutec is None:
            raise RuntimeError("cutec unavailable: " + self.import_err.get("cutec", "?"))
        if what == "tvm_ffi" and self.tvm_ffi is None:
            raise RuntimeError("tvm_ffi unavailable: " + self.import_err.get("tvm_ffi", "?"))

    def meta(self):
        torch = self.torch
        m = {
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "torch_cuda": torch.version.cuda,
            "import_s": self.import_s,
            "import_err": self.import_err,
            "l2_bytes": self.l2,
            "cpu_mode": self.cpu,
        }
        if self.triton is not None:
            m["triton"] = self.triton.__version__
        try:
            import importlib.metadata as im

            for d in ("cutec", "nvidia-cutlass-dsl", "cuda-bindings", "cuda-python", "apache-tvm-ffi", "numpy"):
                try:
                    m[d] = im.version(d)
                except Exception:
                    pass
        except Exception:
            pass
        if self.cute is not None:
            try:
                from cutlass.base_dsl.env_manager import get_cuda_toolkit_path

                m["cute_cuda_toolkit"] = get_cuda_toolkit_path()
            except Exception:
                pass
            m["CUTE_DSL_ARCH"] = os.environ.get("CUTE_DSL_ARCH")
            m["cutlass_file"] = getattr(self.cutlass, "__file__", None)
        if not self.cpu:
            p = torch.cuda.get_device_properties(0)
            m.update(
                device=torch.cuda.get_device_name(0),
                sm_count=p.multi_processor_count,
                capability=list(torch.cuda.get_device_capability(0)),
                total_mem_gib=round(p.total_memory / 2**30, 1),
            )
            try:
                m["driver"] = torch._C._cuda_getDriverVersion()
            except Exception:
                pass
        return m


# ----------------------------------------------------------------------------
# timing
# ----------------------------------------------------------------------------
SLEEP_HZ = 2.0e9  # cycles per second assumed for torch.cuda._sleep (upper bound of H100 SM clock)


def queue_timed(torch, calls, first, count, spin_ms):
    """Queues `count` calls, calls[first], calls[first + 1], ... (rotating), each between a CUDA
    event pair, behind a sleep kernel of spin_ms so that the host has queued them all before the
    GPU reaches the first; returns the event pairs, to read after a synchronize."""
    evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(count)]
    if hasattr(torch.cuda, "_sleep"):
        torch.cuda._sleep(int(spin_ms * 1e-3 * SLEEP_HZ))
    for k, (start, end) in enumerate(evs):
        start.record()
        calls[(first + k) % len(calls)]()
        end.record()
    return evs


def bench(env, calls, target_s=0.25, min_reps=20, max_reps=300, warmup=10, batch=50, warm_s=0.1):
    """Median time per call (ms) of calls[i % len(calls)](), rotating over the calls.

    The warm-up runs at least `warmup` calls and `warm_s` seconds of them: the H100's clocks follow
    its power draw within tens of milliseconds, so a short warm-up after a lighter kernel (a sleep,
    another implementation) times the calls at the clocks that kernel left (session 21: the first
    implementation of a round read up to 10% faster than the same cubin in second place).

    GPU: one CUDA event pair around every call; before each batch a sleep kernel
    keeps the GPU busy long enough for the host to queue the whole batch, so the
    event pairs time the kernels and not the host launch path. queue_ahead_frac
    says for how many batches the host had finished queueing before the GPU
    reached the batch's first event (1.0 = all)."""
    torch = env.torch
    n = len(calls)
    for i in range(3):
        calls[i % n]()
    env.sync()
    t = time.perf_counter()
    for i in range(warmup):
        calls[i % n]()
    t_host = (time.perf_counter() - t) / warmup
    env.sync()
    t_wall = (time.perf_counter() - t) / warmup
    if not env.cpu and warm_s > 0:
        extra = int(warm_s / max(t_wall, 1e-7))
        for i in range(min(extra, 10_000)):
            calls[i % n]()
        env.sync()
    reps = int(min(max_reps, max(min_reps, target_s / max(t_wall, 1e-7))))
    times, spans, ahead, nb, i = [], [], 0, 0, 0
    while len(times) < reps:
        b = min(batch, reps - len(times))
        if env.cpu:
            for _ in range(b):
                s = time.perf_counter()
                calls[i % n]()
                times.append((time.perf_counter() - s) * 1e3)
                i += 1
            continue
        evs = queue_timed(torch, calls, i, b, min(50.0, max(1.0, 1.5 * b * t_host * 1e3 + 0.5)))
        i += b
        ahead += 0 if evs[0][0].query() else 1
        nb += 1
        torch.cuda.synchronize()
        times += [s.elapsed_time(e) for s, e in evs]
        spans.append(evs[0][0].elapsed_time(evs[-1][1]) / b)
    times.sort()

    def q(f):
        return times[min(len(times) - 1, int(f * len(times)))]

    return {
        "median_ms": statistics.median(times),
        "min_ms": times[0],
        "p10_ms": q(0.1),
        "p90_ms": q(0.9),
        "mean_ms": sum(times) / len(times),
        "reps": len(times),
        "n_buffer_sets": n,
        "host_enqueue_us": t_host * 1e6,
        "queue_ahead_frac": (ahead / nb) if nb else None,
        # first start to last end of a batch / calls: back-to-back throughput incl. gaps
        "batch_span_ms_per_call": statistics.median(spans) if spans else None,
    }


class TorchEnv:
    """What bench() needs of the harness's Env, for scripts that time on their own with torch
    already imported (bench/add_variants.py, bench/row_sum_variants.py): CUDA only."""

    cpu = False

    def __init__(self, torch):
        self.torch = torch

    def sync(self):
        self.torch.cuda.synchronize()


def rotated_rate(env, fn, sets, bytes_per_call):
    """bench() of fn(*set), rotating over the input sets: (GB/s, median us, queue_ahead_frac)."""
    r = bench(env, [(lambda s=s: fn(*s)) for s in sets])
    return bytes_per_call / (r["median_ms"] * 1e-3) / 1e9, r["median_ms"] * 1e3, r["queue_ahead_frac"]


def n_rotations(bytes_per_set, l2, factor=4, max_sets=16):
    """Input/output sets to rotate over so that consecutive calls miss the L2."""
    if bytes_per_set >= factor * l2:
        return 1
    return max(2, min(max_sets, math.ceil(factor * l2 / bytes_per_set)))


def round_order(items, r):
    """items in the order round r times them: rotated to start at item r (mod their number)."""
    k = r % max(len(items), 1)
    return items[k:] + items[:k]


def round_robin_tflops(env, impls, flop, rounds, min_reps, max_reps):
    """{label: [TFLOP/s per round]}: each round times every implementation once (bench(), same
    method), round-robin, as clocks move with power and temperature from one second to the next.
    Round r starts at implementation r (mod their number), so that no implementation always
    follows the same one (with as many rounds as implementations, each takes every place once)."""
    rates = {label: [] for label, _ in impls}
    for r in range(rounds):
        for label, calls in round_order(impls, r):
            r = bench(env, calls, min_reps=min_reps, max_reps=max_reps)
            rates[label].append(flop / (r["median_ms"] * 1e-3) / 1e12)
    return rates


def print_tflops(impls, rates, errs, width):
    """One line per implementation: median TFLOP/s, its ratio to the first's, its relative error and
    every round's rate."""
    base = statistics.median(rates[impls[0][0]]) if impls else 1.0
    for label, _ in impls:
        tf = statistics.median(rates[label])
        spread = " ".join(f"{v:.0f}" for v in rates[label])
        print(f"  {label:{width}s} {tf:7.1f} TFLOP/s  {tf / base:5.3f}  relerr {errs[label]:.2e}  rounds: {spread}")


def relerr(out, ref):
    """||out - ref|| / ||ref|| in float64; NaN anywhere -> inf (unwritten output)."""
    torch = sys.modules["torch"]
    o = out.double()
    if torch.isnan(o).any().item():
        return float("inf")
    return ((o - ref).norm() / ref.norm()).item()


@contextlib.contextmanager
def captured_stdout(sink):
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            yield
    finally:
        sink.append(buf.getvalue())


def cute_compile(env, fn, *args, **kw):
    """cute.compile with the seeds' compile-time prints captured; returns (compiled, seconds, printed)."""
    out = []
    t = time.perf_counter()
    with captured_stdout(out):
        f = env.cute.compile(fn, *args, **kw)
    return f, time.perf_counter() - t, out[0]


# ----------------------------------------------------------------------------
# child side: case runner
# ----------------------------------------------------------------------------
class Child:
    def __init__(self, args, env):
        self.args, self.env = args, env
        self.section = args.child
        self.deadline = args.deadline
        self.done = set()
        self.part = args.part
        by_key = {}
        for r in read_part(self.part):
            if r.get("key"):
                by_key.setdefault(r["key"], []).append(r)
        for k, rs in by_key.items():
            # a case that failed with the CUDA context left unusable gets one retry in a
            # fresh process (the error may have come from an earlier case); all others
            # (finished, or started and crashed) are not run again
            if rs[-1].get("sticky") and sum(1 for r in rs if r.get("sticky")) < 2:
                continue
            self.done.add(k)
        self.dead = False

    def emit(self, rec):
        with open(self.part, "a") as f:
            f.write(json.dumps(sanitize(rec)) + "\n")

    def case(self, key, meta, body):
        """Run body() guarded; append a 'started' record first so a crash is visible."""
        if key in self.done:
            return None
        if self.dead:
            return None
        rec = dict(meta, key=key, section=self.section)
        if time.time() > self.deadline:
            rec.update(status="skipped", error="time budget for this section used up")
            self.emit(rec)
            return rec
        self.emit(dict(key=key + "#started", section=self.section))
        if os.environ.get("BENCH_PEERS_CRASH_AT") == key:  # test hook for the relaunch path
            os._exit(7)
        t = time.time()
        try:
            res = body() or {}
            rec.update(res)
            rec.setdefault("status", "ok")
        except Mismatch as e:
            rec.update(status="MISMATCH", relerr=e.relerr, error=str(e))
        except NotApplicable as e:
            rec.update(status="n/a", error=str(e))
        except Exception as e:
            rec.update(
                status="error",
                error=f"{type(e).__name__}: {' '.join(str(e).split())[:600]}",
                traceback=traceback.format_exc()[-3000:],
            )
        rec["wall_s"] = round(time.time() - t, 3)
        self.emit(rec)
        self.print_rec(rec)
        if rec["status"] not in ("ok", "skipped", "n/a") and not self.env.cpu:
            try:  # sticky CUDA error? then this process is useless: exit, parent relaunches
                self.env.torch.cuda.synchronize()
            except Exception as e:
                self.dead = True
                rec["sticky"] = True
                rec["error"] = f"[CUDA context unusable afterwards: {' '.join(str(e).split())[:200]}] " + rec.get(
                    "error", ""
                )
                self.emit(rec)
                log(f"!!! CUDA context unusable after {key}: {e}; child exits for a relaunch")
                sys.exit(3)
        return rec

    @staticmethod
    def print_rec(r):
        st = r.get("status")
        tag = {"ok": "  ", "MISMATCH": "!!! MISMATCH", "error": "!! ERROR", "skipped": "-- skipped"}.get(st, st)
        parts = [
            f"{r.get('impl', '')}:{r.get('variant', '')}",
            r.get("dtype", ""),
            "x".join(map(str, r["shape"])) if r.get("shape") else "",
        ]
        s = " ".join(p for p in parts if p)
        if r.get("relerr") is not None:
            s += f" relerr={r['relerr']:.2e}"
        if r.get("median_ms") is not None:
            s += f" {r['median_ms'] * 1e3:.1f}us"
        if r.get("gbps") is not None:
            s += f" {r['gbps']:.0f}GB/s"
        if r.get("compile_s") is not None:
            s += f" compile={r['compile_s']:.2f}s"
        for k in ("first_s", "second_s", "per_call_us", "enqueue_us"):
            if r.get(k) is not None:
                s += f" {k}={r[k]:.3g}"
        if st not in ("ok",):
            s += "  " + str(r.get("error", ""))[:300]
        log(tag, s)


def _raise(e):
    raise e


def sanitize(o):
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {str(k): sanitize(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [sanitize(v) for v in o]
    if isinstance(o, (str, int, bool)) or o is None:
        return o
    return str(o)


# ----------------------------------------------------------------------------
# implementations (factories return one callable per buffer set; each callable
# returns the output tensor, so the correctness check can use calls[0]())
# ----------------------------------------------------------------------------
def add_factories(env):
    torch = env.torch
    # The peer: torch writing into the rotated output, as every other implementation does. `a+b`
    # allocates its result, and the caching allocator hands back the same block each call, so
    # that output stays in L2 across the rotation (2341 vs 1966 GB/s at f16 2048^2 on the H100):
    # shown, but not a peer.
    out = [
        ("torch", "add(out=)", lambda sets: ([(lambda a=a, b=b, c=c: torch.add(a, b, out=c)) for a, b, c in sets], {})),
        (
            "torch",
            "a+b",
            lambda sets: (
                [(lambda a=a, b=b: a + b) for a, b, c in sets],
                {"not_a_peer": "allocates its output: the same L2-resident block every call"},
            ),
        ),
    ]
    if env.TP is not None:
        for blk, nw in env.TP.ADD_CONFIGS:

            def fac(sets, blk=blk, nw=nw):
                def mk(a, b, c):
                    def run():
                        env.TP.launch_add(a, b, c, blk, nw)
                        return c

                    return run

                return [mk(*s) for s in sets], {}

            out.append(("triton", f"B{blk}w{nw}", fac))
    else:
        out.append(("triton", "*", None))
    for v, fname in CUTE_ADD_VARIANTS.items():

        def fac(sets, fname=fname):
            env.need("cute")

            def fd(t):
                return env.from_dlpack(t, assumed_align=16)

            conv = [tuple(fd(t) for t in s) for s in sets]
            f, cs, printed = cute_compile(env, getattr(env.S, fname), *conv[0])

            def mk(ct, c):
                def run():
                    f(*ct)
                    return c

                return run

            return [mk(ct, s[2]) for ct, s in zip(conv, sets)], {"compile_s": cs, "compile_stdout": printed[:2000]}

        out.append(("cute", v, fac))

    def fac_tvm(sets):
        env.need("cute")
        env.need("tvm_ffi")
        a0 = [env.from_dlpack(t, assumed_align=16, enable_tvm_ffi=True) for t in sets[0]]
        f, cs, printed = cute_compile(env, env.S.elementwise_add, *a0, options="--enable-tvm-ffi")

        def mk(a, b, c):
            def run():
                f(a, b, c)
                return c

            return run

        return [mk(*s) for s in sets], {"compile_s": cs}

    out.append(("cute", "tv003+tvmffi", fac_tvm))

    # cutec: the same three seed kernels (samples/elementwise_add.cute, generic: one cubin, the call
    # picks the f16 or f32 instance), compiled ahead of time, and samples/predicated_add.cute (f32, any shape)
    # and samples/fast_add.cute's `fast_add` (block size and vectors per thread picked by size).
    for v, host in list(CUTEC_ADD_HOSTS.items()) + [("predicated", "predicated_add"), ("fast", "fast_add")]:

        def fac_cutec(sets, host=host):
            env.need("cutec")
            f16 = sets[0][0].dtype == env.torch.float16
            if host == "predicated_add" and f16:
                raise NotApplicable("samples/predicated_add.cute is f32 only")
            cubin = host if host in ("predicated_add", "fast_add") else "elementwise_add"
            return [cutec_call(env.cutec.host(cubin, host), s) for s in sets], {}

        out.append(("cutec", v, fac_cutec))
    return out


def cutec_call(h, tensors, out_index=-1):
    """A callable that calls host function h on the tensors and returns the output tensor."""
    out = tensors[out_index]

    def run():
        h(*tensors)
        return out

    return run


class NotApplicable(Exception):
    """A case that does not exist for this shape or dtype (recorded as skipped)."""


def apply_factories(env):
    torch = env.torch

    def torch_mul(relu):
        def fac(sets):
            def mk(a, b, c):
                def run():
                    torch.mul(a, b, out=c)
                    if relu:
                        torch.relu_(c)
                    return c

                return run

            return [mk(*s) for s in sets], {}

        return fac

    out = []
    for relu in (False, True):
        op = "mul_relu" if relu else "mul"
        out.append(("torch", f"{op}", torch_mul(relu)))
        if env.TP is not None:
            for blk, nw in env.TP.ADD_CONFIGS:

                def fac(sets, blk=blk, nw=nw, relu=relu):
                    def mk(a, b, c):
                        def run():
                            env.TP.launch_mul(a, b, c, blk, nw, relu)
                            return c

                        return run

                    return [mk(*s) for s in sets], {}

                out.append(("triton", f"{op} B{blk}w{nw}", fac))
        else:
            out.append(("triton", f"{op} *", None))

        def fac_cutec(sets, op=op):
            env.need("cutec")
            h = env.cutec.host("elementwise_apply", f"elementwise_{op}")
            return [cutec_call(h, s) for s in sets], {}

        out.append(("cutec", op, fac_cutec))

        # samples/fast_add.cute's launch of the same operation (picked by size)
        def fac_cutec_fast(sets, op=op):
            env.need("cutec")
            h = env.cutec.host("fast_add", f"fast_{op}")
            return [cutec_call(h, s) for s in sets], {}

        out.append(("cutec", f"fast_{op}", fac_cutec_fast))
    return out


def reduce_factories(env):
    torch = env.torch
    out = [("torch", "sum(-1)", lambda sets: ([(lambda x=x: torch.sum(x, dim=-1)) for x, o in sets], {}))]
    if env.TP is not None:
        for bm, bn, nw in env.TP.ROWSUM_CONFIGS:

            def fac(sets, bm=bm, bn=bn, nw=nw):
                def mk(x, o):
                    def run():
                        env.TP.launch_row_sum(x, o, bm, bn, nw)
                        return o

                    return run

                return [mk(*s) for s in sets], {}

            out.append(("triton", f"M{bm}N{bn}w{nw}", fac))
    else:
        out.append(("triton", "*", None))

    def fac_simple(sets):
        env.need("cute")
        conv = [(env.from_dlpack(x), env.from_dlpack(o)) for x, o in sets]  # seed: no assumed_align
        f, cs, printed = cute_compile(env, env.S.reduce_sum, *conv[0])

        def mk(ct, o):
            def run():
                f(*ct)
                return o

            return run

        return [mk(ct, s[1]) for ct, s in zip(conv, sets)], {"compile_s": cs}

    out.append(("cute", "simple000", fac_simple))

    def fac_tiled(sets):
        env.need("cute")
        M, N = sets[0][0].shape
        obj = env.S.ReduceSumTiledCopy((M, N), env.cutlass.Float32, dim=-1)
        st = env.stream()
        conv = [(env.from_dlpack(x), env.from_dlpack(o)) for x, o in sets]
        f, cs, printed = cute_compile(env, obj, *conv[0], st)

        def mk(ct, o):
            def run():
                f(*ct, st)
                return o

            return run

        return [mk(ct, s[1]) for ct, s in zip(conv, sets)], {"compile_s": cs}

    out.append(("cute", "tiledcopy000", fac_tiled))

    # row_sum picks its kernel by the row length at run time (a warp per row up to 1024 columns);
    # fast_row_sum (same cubin) reads 16-byte vectors, lanes or a block per row picked from N.
    for cubin, host in (
        ("reduce_sum", "reduce_sum"),
        ("reduce_sum_tiled_copy", "reduce_rows"),
        ("reduce_sum_compositional", "reduce_compositional"),
        ("row_sum", "row_sum"),
        ("row_sum", "fast_row_sum"),
    ):

        def fac_cutec_reduce(sets, cubin=cubin, host=host):
            env.need("cutec")
            return [cutec_call(env.cutec.host(cubin, host), s) for s in sets], {}

        out.append(("cutec", host, fac_cutec_reduce))
    return out


def triton_applicable(variant, M, N, env):
    if variant in ("reduce_rows", "reduce_compositional"):  # cutec: N = 1024, M a multiple of 4
        return N == 1024 and M % 4 == 0
    if env.TP is None or variant == "*":
        return True
    if variant.startswith("M"):
        bm = int(variant[1 : variant.index("N")])
        bn = int(variant[variant.index("N") + 1 : variant.index("w")])
        return bn <= N and bm <= M
    return True


# ----------------------------------------------------------------------------
# sections (child side)
# ----------------------------------------------------------------------------
def sec_copy(ch):
    env, torch = ch.env, ch.env.torch
    nbytes = CPU_COPY_BYTES if env.cpu else COPY_BYTES

    def body():
        src = torch.randn(nbytes // 4, device=env.device)
        dst = torch.empty_like(src)
        dst.fill_(float("nan"))
        dst.copy_(src)
        env.sync()
        if not torch.equal(dst, src):
            raise Mismatch("copy mismatch", relerr(dst, src.double()))
        r = bench(env, [lambda: dst.copy_(src)], target_s=0.3)
        r["gbps"] = 2 * nbytes / (r["median_ms"] * 1e-3) / 1e9
        r["relerr"] = 0.0
        return r

    ch.case("copy|torch", {"impl": "torch", "variant": "copy_", "bytes": nbytes, "dtype": "float32"}, body)


def run_elementwise(ch, section, facs, dtypes, reference):
    """C = op(A, B) over ADD_SHAPES x dtypes for each factory; reference(variant, a, b) -> the
    float64 result."""
    env, torch = ch.env, ch.env.torch
    shapes = CPU_ADD_SHAPES if env.cpu else ADD_SHAPES
    for M, N in shapes:
        for dname in dtypes:
            keys = [f"{section}|{impl}|{v}|{dname}|{M}x{N}" for impl, v, _ in facs]
            if all(k in ch.done for k in keys):
                continue
            dt = env.dt(dname)
            esz = torch.empty((), dtype=dt).element_size()
            per_set = 3 * M * N * esz
            nrot = n_rotations(per_set, env.l2)
            sets = []
            try:
                for _ in range(nrot):
                    sets.append(
                        (
                            torch.randn(M, N, device=env.device, dtype=dt),
                            torch.randn(M, N, device=env.device, dtype=dt),
                            torch.empty(M, N, device=env.device, dtype=dt),
                        )
                    )
            except Exception as e:
                sets = None
                for k, (impl, v, _) in zip(keys, facs):
                    ch.case(
                        k,
                        {"impl": impl, "variant": v, "dtype": dname, "shape": [M, N]},
                        lambda e=e: _raise(RuntimeError(f"input allocation failed: {e}")),
                    )
                continue
            for key, (impl, v, fac) in zip(keys, facs):
                meta = {"impl": impl, "variant": v, "dtype": dname, "shape": [M, N], "bytes_per_call": per_set}

                # `sets` is bound here (ruff's F821 says not): the loop ends with `del sets`, which frees the tensors.
                def body(fac=fac, impl=impl, v=v):
                    if fac is None:
                        env.need(impl)
                    calls, extra = fac(sets)  # noqa: F821
                    a, b, c = sets[0]  # noqa: F821
                    a.normal_()
                    b.normal_()
                    c.fill_(float("nan"))
                    out = calls[0]()
                    env.sync()
                    ref = reference(v, a.double(), b.double())
                    err = relerr(out, ref)
                    exact = bool(torch.equal(out, ref.to(out.dtype)))
                    del ref
                    if not err <= TOL[dname]:
                        raise Mismatch(f"relerr {err:.3e} > {TOL[dname]:.0e}", err)
                    r = bench(env, calls)
                    r.update(
                        extra,
                        relerr=err,
                        equal_to_rounded_reference=exact,
                        gbps=per_set / (r["median_ms"] * 1e-3) / 1e9,
                    )
                    return r

                ch.case(key, meta, body)
            del sets
            if not env.cpu:
                torch.cuda.empty_cache()


def sec_add(ch):
    run_elementwise(ch, "add", add_factories(ch.env), ADD_DTYPES, lambda v, a, b: a + b)


def sec_apply(ch):
    run_elementwise(
        ch, "apply", apply_factories(ch.env), ["float16"], lambda v, a, b: (a * b).relu() if "relu" in v else a * b
    )


def sec_reduce(ch):
    env, torch = ch.env, ch.env.torch
    shapes = CPU_REDUCE_SHAPES if env.cpu else REDUCE_SHAPES
    facs = reduce_factories(env)
    for M, N in shapes:
        todo = [(impl, v, fac) for impl, v, fac in facs if triton_applicable(v, M, N, env)]
        keys = [f"reduce|{impl}|{v}|float32|{M}x{N}" for impl, v, _ in todo]
        if all(k in ch.done for k in keys):
            continue
        per_set = M * N * 4 + M * 4
        nrot = n_rotations(per_set, env.l2)
        try:
            sets = [(torch.randn(M, N, device=env.device), torch.empty(M, device=env.device)) for _ in range(nrot)]
        except Exception as e:
            sets = None
            for key, (impl, v, _) in zip(keys, todo):
                ch.case(
                    key,
                    {"impl": impl, "variant": v, "dtype": "float32", "shape": [M, N]},
                    lambda e=e: _raise(RuntimeError(f"input allocation failed: {e}")),
                )
            continue
        for key, (impl, v, fac) in zip(keys, todo):
            meta = {"impl": impl, "variant": v, "dtype": "float32", "shape": [M, N], "bytes_per_call": M * N * 4}

            # `sets` is bound here (ruff's F821 says not): the loop ends with `del sets`, which frees the tensors.
            def body(fac=fac, impl=impl):
                if fac is None:
                    env.need(impl)
                calls, extra = fac(sets)  # noqa: F821
                x, o = sets[0]  # noqa: F821
                x.normal_()
                o.fill_(float("nan"))
                out = calls[0]()
                env.sync()
                err = relerr(out, x.double().sum(-1))
                if not err <= TOL["reduce"]:
                    raise Mismatch(f"relerr {err:.3e} > {TOL['reduce']:.0e}", err)
                r = bench(env, calls)
                r.update(extra, relerr=err, gbps=M * N * 4 / (r["median_ms"] * 1e-3) / 1e9)
                return r

            ch.case(key, meta, body)
        del sets
        if not env.cpu:
            torch.cuda.empty_cache()


def sec_reduce_nd(ch):
    """Sum over the middle mode (256) of B x 256 x A fp32: torch.sum(dim=1) and cutec's reduce_nd and
    reduce_mid."""
    env, torch = ch.env, ch.env.torch
    shapes = CPU_REDUCE_ND_SHAPES if env.cpu else REDUCE_ND_SHAPES

    def fac_torch(sets):
        return [(lambda x=x, o=o: torch.sum(x, dim=1, out=o)) for x, o in sets], {}

    def fac_cutec(host):
        def fac(sets):
            env.need("cutec")
            return [cutec_call(env.cutec.host("reduce_sum_nd", host), s) for s in sets], {}

        return fac

    # reduce_nd: the seed's kernel (a warp per output, strided reads); reduce_mid: coalesced.
    facs = [
        ("torch", "sum(1)", fac_torch),
        ("cutec", "reduce_nd", fac_cutec("reduce_nd")),
        ("cutec", "reduce_mid", fac_cutec("reduce_mid")),
    ]
    for shape in shapes:
        B, R, A = shape
        keys = [f"reduce_nd|{impl}|{v}|float32|{B}x{R}x{A}" for impl, v, _ in facs]
        if all(k in ch.done for k in keys):
            continue
        nbytes = B * R * A * 4
        sets = [
            (torch.randn(shape, device=env.device), torch.empty(B, A, device=env.device))
            for _ in range(n_rotations(nbytes, env.l2))
        ]
        for key, (impl, v, fac) in zip(keys, facs):
            # `sets` is bound here (ruff's F821 says not): the loop ends with `del sets`, which frees the tensors.
            def body(fac=fac):
                calls, extra = fac(sets)  # noqa: F821
                x, o = sets[0]  # noqa: F821
                o.fill_(float("nan"))
                out = calls[0]()
                env.sync()
                err = relerr(out, x.double().sum(1))
                if not err <= TOL["reduce"]:
                    raise Mismatch(f"relerr {err:.3e} > {TOL['reduce']:.0e}", err)
                r = bench(env, calls)
                r.update(extra, relerr=err, gbps=nbytes / (r["median_ms"] * 1e-3) / 1e9)
                return r

            ch.case(
                key,
                {"impl": impl, "variant": v, "dtype": "float32", "shape": list(shape), "bytes_per_call": nbytes},
                body,
            )
        del sets
        if not env.cpu:
            torch.cuda.empty_cache()


def gemm_sets(torch, device, M, N, K, store, dt, l2):
    """Operand sets (A, B stored as `store` lays them out, C (M, N) empty) for C = A @ B, enough
    of them that consecutive calls miss the L2; entries scaled so that C's entries are O(1)."""
    sa, sb = store(M, N, K)
    per_set = (M * K + N * K + M * N) * dt.itemsize
    return [
        (
            (torch.randn(sa, device=device) * K**-0.25).to(dt),
            (torch.randn(sb, device=device) * K**-0.25).to(dt),
            torch.empty(M, N, device=device, dtype=dt),
        )
        for _ in range(n_rotations(per_set, l2))
    ]


# The shape categories of issue 31 (bench/gemm_variants.py --categories): the shapes a model's GEMMs
# take beside the large squares. Contiguous extents are multiples of 8 (TMA's 16-byte strides).
GEMM_CATEGORIES = {
    "small": ["768", "1024", "1536", "2048"],
    "skinny-m": ["16x4096x4096", "64x8192x8192", "128x4096x4096", "128x8192x8192", "256x8192x4096"],
    "skinny-n": ["4096x16x4096", "8192x64x8192", "4096x96x4096", "8192x128x8192", "8192x256x4096"],
    "short-k": ["4096x4096x128", "8192x8192x128", "4096x4096x256", "8192x8192x256"],
    "non-multiple": ["1000", "3000x5000x2000", "5000", "7000x6000x4104", "8200"],
}


def parse_gemm_shape(text):
    """'4096' (a square) or 'MxNxK' -> (M, N, K)."""
    dims = tuple(int(x) for x in text.split("x"))
    return dims * 3 if len(dims) == 1 else dims


def gemm_shape_text(shape):
    M, N, K = shape
    return f"{M}^3" if M == N == K else f"{M}x{N}x{K}"


# f32 elements of the workspace W that samples/gemm_sm90_splitk.cute's host functions take after C
# (132 x 128 x 128, the size its header gives for every shape).
SPLITK_WORKSPACE = 132 * 128 * 128


def gemm_workspace(torch, f):
    """The arguments GEMM host function f takes after A, B and C: () for most, (W,) for the split-K
    sample's f32 workspace (one per call site: calls on one stream may share it)."""
    extra = f.params[3:]
    if not extra:
        return ()
    if len(extra) == 1 and extra[0][1].startswith("tensor<f32"):
        return (torch.empty(SPLITK_WORKSPACE, device="cuda", dtype=torch.float32),)
    raise ValueError(f"{f.name}: no bench arguments for its parameters after C: {extra}")


def gemm_cells(torch, mods, shapes, layouts, dtypes, l2):
    """The GEMM cells of bench/gemm_variants.py and bench/gemm_clock.py (each of `shapes`, an
    (M, N, K) or M = N = K, every layout and dtype name): yields (layout, dtype name, (M, N, K), FLOP, impls, errs, tol),
    impls being [(label, [one call per operand set])], torch.matmul first, then the host function
    of each (label, cutec module) that has it; each implementation has run once on the first set
    and errs[label] is its error against a float64 reference."""
    dts = {"f16": torch.float16, "bf16": torch.bfloat16}
    for s in shapes:
        M, N, K = s if isinstance(s, tuple) else (s, s, s)
        for layout in layouts:
            store, mm = GEMM_LAYOUTS[layout]
            for dname in dtypes:
                dt = dts[dname]
                sets = gemm_sets(torch, "cuda", M, N, K, store, dt, l2)
                x, y = mm(sets[0][0].double(), sets[0][1].double())
                ref = x @ y
                del x, y
                # Per implementation, one call per operand set (the views made once, not per call).
                impls = [
                    (
                        "torch.matmul",
                        [
                            (lambda x=x, y=y, c=c: torch.matmul(x, y, out=c))
                            for x, y, c in ((*mm(p, q), c) for p, q, c in sets)
                        ],
                    )
                ]
                host = f"gemm_{layout}_{dname}"
                for label, m in mods:
                    if host in m.hosts:
                        f = m.host(host)
                        extra = gemm_workspace(torch, f)
                        # The host takes the logical operands A (M, K) and B (N, K), C, then any workspace.
                        impls.append(
                            (
                                label,
                                [
                                    cutec_call(f, (x, y.t(), c, *extra), out_index=2)
                                    for x, y, c in ((*mm(p, q), c) for p, q, c in sets)
                                ],
                            )
                        )
                errs = {}
                for label, calls in impls:
                    c = sets[0][2]
                    c.fill_(float("nan"))
                    calls[0]()
                    torch.cuda.synchronize()
                    errs[label] = relerr(c, ref)
                del ref
                yield layout, dname, (M, N, K), 2.0 * M * N * K, impls, errs, TOL[str(dt).removeprefix("torch.")]
                del sets, impls
                torch.cuda.empty_cache()


def sec_gemm(ch):
    """C = A @ B in bf16 and f16 (C of the input type): torch.matmul (cuBLAS) and each of cutec's
    GEMM host functions, on the same operands in the same layout; TFLOP/s."""
    env, torch = ch.env, ch.env.torch
    shapes = CPU_GEMM_SHAPES if env.cpu else GEMM_SHAPES
    for M, N, K in shapes:
        for layout, (store, mm) in GEMM_LAYOUTS.items():
            for dname, short in (("bfloat16", "bf16"), ("float16", "f16")):
                host = f"gemm_{layout}_{short}"
                impls = [("torch", f"matmul {layout}"), ("cutec", host)]
                # The Hopper GEMM (samples/gemm_sm90.cute, wgmma; every layout; sm_90a cubin).
                impls.append(("cutec", f"sm90 {host}"))
                keys = [f"gemm|{impl}|{v}|{dname}|{M}x{N}x{K}" for impl, v in impls]
                if all(k in ch.done for k in keys):
                    continue
                sets = gemm_sets(torch, env.device, M, N, K, store, env.dt(dname), env.l2)
                for key, (impl, v) in zip(keys, impls):
                    # `sets` is bound here (ruff's F821 says not): the loop ends with `del sets`, which frees the tensors.
                    def body(impl=impl):
                        if impl == "torch":
                            calls = [(lambda a=a, b=b, c=c: torch.matmul(*mm(a, b), out=c)) for a, b, c in sets]  # noqa: F821
                        else:
                            env.need("cutec")
                            cubin, name = ("gemm_sm90", v.split()[1]) if v.startswith("sm90 ") else ("gemm_sm80", v)
                            if cubin == "gemm_sm90" and torch.cuda.get_device_capability() != (9, 0):
                                raise NotApplicable("gemm_sm90.cubin is sm_90a (Hopper only)")
                            m = env.cutec.module(cubin)
                            if name not in m.hosts:
                                raise NotApplicable(f"{cubin}.cubin has no {name}")
                            # The host takes the logical operands A (M, K) and B (N, K): X and Y^T
                            # of the views torch multiplies.
                            calls = [cutec_call(m.host(name), (mm(a, b)[0], mm(a, b)[1].t(), c)) for a, b, c in sets]  # noqa: F821
                        a, b, c = sets[0]  # noqa: F821
                        c.fill_(float("nan"))
                        out = calls[0]()
                        env.sync()
                        x, y = mm(a.double(), b.double())
                        err = relerr(out, x @ y)
                        del x, y
                        if not err <= TOL[dname]:
                            raise Mismatch(f"relerr {err:.3e} > {TOL[dname]:.1e}", err)
                        r = bench(env, calls, min_reps=10, max_reps=60)
                        r.update(relerr=err, tflops=2.0 * M * N * K / (r["median_ms"] * 1e-3) / 1e12)
                        return r

                    ch.case(key, {"impl": impl, "variant": v, "dtype": dname, "shape": [M, N, K]}, body)
                del sets
                if not env.cpu:
                    torch.cuda.empty_cache()


def sec_compile(ch):
    """First and second cute.compile of each kernel (this child is a fresh process,
    so 'first' is the first compile of that function in the process; the very
    first one also pays the DSL's one-time setup), and Triton first calls with a
    fresh cache dir."""
    env, torch = ch.env, ch.env.torch
    ch.emit(
        {"key": "meta", "section": "compile", "meta": env.meta(), "adaptations": getattr(env.S, "ADAPTATIONS", None)}
    )
    M, N = CPU_ADD_SHAPES[0] if env.cpu else (2048, 2048)
    a = torch.randn(M, N, device=env.device, dtype=torch.float16)
    b = torch.randn_like(a)
    c = torch.empty_like(a)
    first_in_process = [True]

    def cute_twice(fn, args, kw, run_after):
        def body():
            env.need("cute")
            if "options" in kw:
                env.need("tvm_ffi")
            was_first = first_in_process[0]
            first_in_process[0] = False
            f1, t1, printed = cute_compile(env, fn, *args(), **kw)
            t = time.perf_counter()
            run_after(f1)
            env.sync()
            first_call = time.perf_counter() - t
            f2, t2, _ = cute_compile(env, fn, *args(), **kw)
            return {
                "first_s": t1,
                "second_s": t2,
                "first_call_s": first_call,
                "process_first_compile": was_first,
                "compile_stdout": printed[:2000],
            }

        return body

    if env.cute is not None:

        def fd(t):
            return env.from_dlpack(t, assumed_align=16)

        for v, fname in CUTE_ADD_VARIANTS.items():
            ch.case(
                f"compile|cute|{v}",
                {"impl": "cute", "variant": v, "dtype": "float16", "shape": [M, N]},
                cute_twice(getattr(env.S, fname), lambda: (fd(a), fd(b), fd(c)), {}, lambda f: f(fd(a), fd(b), fd(c))),
            )
        RM, RN = CPU_REDUCE_SHAPES[0] if env.cpu else (4096, 4096)
        x = torch.randn(RM, RN, device=env.device)
        o = torch.empty(RM, device=env.device)
        ch.case(
            "compile|cute|simple000",
            {"impl": "cute", "variant": "simple000", "dtype": "float32", "shape": [RM, RN]},
            cute_twice(
                env.S.reduce_sum,
                lambda: (env.from_dlpack(x), env.from_dlpack(o)),
                {},
                lambda f: f(env.from_dlpack(x), env.from_dlpack(o)),
            ),
        )
        st = env.stream()
        obj = env.S.ReduceSumTiledCopy((RM, RN), env.cutlass.Float32, dim=-1)
        ch.case(
            "compile|cute|tiledcopy000",
            {"impl": "cute", "variant": "tiledcopy000", "dtype": "float32", "shape": [RM, RN]},
            cute_twice(
                obj,
                lambda: (env.from_dlpack(x), env.from_dlpack(o), st),
                {},
                lambda f: f(env.from_dlpack(x), env.from_dlpack(o), st),
            ),
        )

        def fdt(t):
            return env.from_dlpack(t, assumed_align=16, enable_tvm_ffi=True)

        ch.case(
            "compile|cute|tv003+tvmffi",
            {"impl": "cute", "variant": "tv003+tvmffi", "dtype": "float16", "shape": [M, N]},
            cute_twice(
                env.S.elementwise_add,
                lambda: (fdt(a), fdt(b), fdt(c)),
                {"options": "--enable-tvm-ffi"},
                lambda f: f(a, b, c),
            ),
        )
    else:
        ch.case("compile|cute|*", {"impl": "cute", "variant": "*"}, lambda: env.need("cute"))

    def triton_first(launch, check):
        def body():
            env.need("triton")
            cache = os.environ.get("TRITON_CACHE_DIR")
            t = time.perf_counter()
            launch()
            env.sync()
            t1 = time.perf_counter() - t
            t = time.perf_counter()
            launch()
            env.sync()
            t2 = time.perf_counter() - t
            check()
            nfiles = sum(len(fs) for _, _, fs in os.walk(cache)) if cache and os.path.isdir(cache) else None
            return {
                "first_s": t1,
                "second_s": t2,
                "compile_s": t1 - t2,
                "cache_dir": cache,
                "cache_files_after": nfiles,
            }

        return body

    def chk_add():
        err = relerr(c, a.double() + b.double())
        if not err <= TOL["float16"]:
            raise Mismatch(f"relerr {err:.3e}", err)

    ch.case(
        "compile|triton|add_B1024w4",
        {
            "impl": "triton",
            "variant": "add B1024w4 (first Triton kernel in process)",
            "dtype": "float16",
            "shape": [M, N],
        },
        triton_first(lambda: env.TP.launch_add(a, b, c, 1024, 4), chk_add),
    )
    RM, RN = CPU_REDUCE_SHAPES[0] if env.cpu else (4096, 4096)
    xr = torch.randn(RM, RN, device=env.device)
    orr = torch.empty(RM, device=env.device)

    def chk_red():
        err = relerr(orr, xr.double().sum(-1))
        if not err <= TOL["reduce"]:
            raise Mismatch(f"relerr {err:.3e}", err)

    bn = min(1024, RN)
    ch.case(
        "compile|triton|rowsum",
        {"impl": "triton", "variant": f"row_sum M1N{bn}w4 (second kernel)", "dtype": "float32", "shape": [RM, RN]},
        triton_first(lambda: env.TP.launch_row_sum(xr, orr, 1, bn, 4), chk_red),
    )


def host_rounds(fn, sync, n, rounds, max_s=10.0, warmup=20):
    """Host µs per call of fn: the median of `rounds` rounds of `n` back-to-back calls, each round
    ended by sync() (inside its time for `per_call_us`, outside it for `enqueue_us`); past `max_s`
    seconds in all (0: no limit) the round in progress ends and no other starts. The launch section
    and bench/launch_breakdown.py."""
    for _ in range(warmup):
        fn()
    sync()
    per, enq, calls = [], [], 0
    start = time.perf_counter()
    for _ in range(max(1, rounds)):
        t = time.perf_counter()
        k = 0
        while k < n:
            fn()
            k += 1
            if max_s and (k % 10 == 0) and time.perf_counter() - start > max_s:
                break
        te = time.perf_counter() - t
        sync()
        tt = time.perf_counter() - t
        per.append(tt / k * 1e6)
        enq.append(te / k * 1e6)
        calls += k
        if max_s and time.perf_counter() - start > max_s:
            break
    return {
        "per_call_us": statistics.median(per),
        "enqueue_us": statistics.median(enq),
        "calls": calls,
        "rounds": len(per),
        "per_call_rounds_us": per,
    }


def sec_launch(ch):
    env, torch = ch.env, ch.env.torch
    M, N = TINY_SHAPE
    a = torch.randn(M, N, device=env.device)
    b = torch.randn_like(a)
    c = torch.empty_like(a)
    n_calls = ch.args.launch_calls

    def host_loop(fn, n=n_calls, rounds=ch.args.launch_rounds, max_s=10.0):
        return host_rounds(fn, env.sync, n, rounds, max_s)

    def check():
        err = relerr(c, a.double() + b.double())
        if not err <= TOL["float32"]:
            raise Mismatch(f"relerr {err:.3e}", err)
        return err

    def run_case(variant, impl, make):
        def body():
            fn = make()
            c.fill_(float("nan"))
            fn()
            env.sync()
            err = check()
            r = host_loop(fn)
            r["relerr"] = err
            if not env.cpu:
                g = bench(env, [fn], target_s=0.05)
                r["gpu_median_us"] = g["median_ms"] * 1e3
            return r

        ch.case(
            f"launch|{impl}|{variant}", {"impl": impl, "variant": variant, "dtype": "float32", "shape": [M, N]}, body
        )

    run_case("add(out=c)", "torch", lambda: lambda: torch.add(a, b, out=c))
    ch.case(
        "launch|torch|a+b(alloc)",
        {"impl": "torch", "variant": "a+b(alloc)", "dtype": "float32", "shape": [M, N]},
        lambda: host_loop(lambda: a + b),
    )

    def mk_triton():
        env.need("triton")
        return lambda: env.TP.launch_add(a, b, c, 1024, 4)

    run_case("add B1024w4", "triton", mk_triton)

    def mk_cute(fname, per_call_dlpack=False):
        def make():
            env.need("cute")

            def fd(t):
                return env.from_dlpack(t, assumed_align=16)

            args = (fd(a), fd(b), fd(c))
            f, _, _ = cute_compile(env, getattr(env.S, fname), *args)
            if per_call_dlpack:
                return lambda: f(fd(a), fd(b), fd(c))
            return lambda: f(*args)

        return make

    run_case("tv003 compiled", "cute", mk_cute("elementwise_add"))
    run_case("tv003 compiled+from_dlpack/call", "cute", mk_cute("elementwise_add", True))
    run_case("naive003 compiled", "cute", mk_cute("naive_elementwise_add"))

    def mk_tvm():
        env.need("cute")
        env.need("tvm_ffi")

        def fdt(t):
            return env.from_dlpack(t, assumed_align=16, enable_tvm_ffi=True)

        f, _, _ = cute_compile(env, env.S.elementwise_add, fdt(a), fdt(b), fdt(c), options="--enable-tvm-ffi")
        return lambda: f(a, b, c)

    run_case("tv003 tvm-ffi(torch tensors)", "cute", mk_tvm)

    def mk_cutec(views=False, explicit_stream=False):
        def make():
            env.need("cutec")
            h = env.cutec.host("elementwise_add", "elementwise_add")  # the f32 instance, picked per call
            if views:  # raw pointers, no tensor protocol: the extension's floor
                args = [env.cutec.cutec.TensorView(t.data_ptr(), "f32", t.shape, t.stride()) for t in (a, b, c)]
                return lambda: h(*args)
            if explicit_stream:
                s = torch.cuda.current_stream().cuda_stream
                return lambda: h(a, b, c, stream=s)
            return lambda: h(a, b, c)  # torch tensors, torch's current stream: what a user writes

        return make

    run_case("tv host call (torch tensors)", "cutec", mk_cutec())
    run_case("tv host call (torch tensors, stream=int)", "cutec", mk_cutec(explicit_stream=True))
    run_case("tv host call (cutec.TensorView args)", "cutec", mk_cutec(views=True))

    def jit_direct():
        env.need("cute")

        def fd(t):
            return env.from_dlpack(t, assumed_align=16)

        args = (fd(a), fd(b), fd(c))
        out = []
        with captured_stdout(out):
            t = time.perf_counter()
            env.S.elementwise_add(*args)  # first direct call: compiles (+ file cache)
            env.sync()
            first = time.perf_counter() - t
            r = host_loop(lambda: env.S.elementwise_add(*args), n=50, rounds=1, max_s=10.0)
        check()
        r["first_direct_call_s"] = first
        return r

    ch.case(
        "launch|cute|tv003 direct @cute.jit call",
        {"impl": "cute", "variant": "tv003 direct @cute.jit call", "dtype": "float32", "shape": [M, N]},
        jit_direct,
    )


SECTION_FN = {
    "compile": sec_compile,
    "copy": sec_copy,
    "add": sec_add,
    "apply": sec_apply,
    "reduce": sec_reduce,
    "reduce_nd": sec_reduce_nd,
    "gemm": sec_gemm,
    "launch": sec_launch,
}


def child_main(args):
    env = Env(cpu=args.cpu)
    if args.cpu:
        import warnings

        warnings.filterwarnings("ignore", message=".*CUDA_TOOLKIT_PATH.*")
    ch = Child(args, env)
    log(
        f"child {args.child}: torch {env.torch.__version__}, triton "
        f"{getattr(env.triton, '__version__', None)}, cutlass {'ok' if env.cute else env.import_err.get('cutlass')}, "
        f"tvm_ffi {'ok' if env.tvm_ffi else 'absent'}; {len(ch.done)} records already in part file"
    )
    SECTION_FN[args.child](ch)
    return 0


# ----------------------------------------------------------------------------
# parent side
# ----------------------------------------------------------------------------
def read_part(path):
    recs = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    recs.append(json.loads(line))
                except Exception:
                    pass
    return recs


def run_sections(args, workdir):
    deadline_all = T0 + args.time_budget
    runs = []
    carry = 0.0
    for sec in args.sections:
        part = os.path.join(workdir, f"{sec}.jsonl")
        start = time.time()
        sec_deadline = min(deadline_all, start + SECTION_SHARE[sec] * args.time_budget / 400.0 + carry)
        for attempt in range(args.max_attempts):
            if time.time() > sec_deadline - 2:
                break
            n_before = len(read_part(part))
            cmd = [
                sys.executable,
                os.path.abspath(__file__),
                "--child",
                sec,
                "--part",
                part,
                "--deadline",
                str(sec_deadline),
                "--launch-calls",
                str(args.launch_calls),
                "--launch-rounds",
                str(args.launch_rounds),
            ]
            if args.cpu:
                cmd.append("--cpu")
            log(f"=== section {sec} (attempt {attempt + 1}, {sec_deadline - time.time():.0f}s left for it)")
            t = time.time()
            try:
                rc = subprocess.run(cmd, timeout=max(5.0, sec_deadline - time.time() + 20)).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
            runs.append({"section": sec, "attempt": attempt + 1, "rc": rc, "wall_s": round(time.time() - t, 1)})
            recs = read_part(part)
            if rc == 0:
                break
            started = {r["key"][:-8] for r in recs if r.get("key", "").endswith("#started")}
            finished = {r["key"] for r in recs if r.get("key") and not r["key"].endswith("#started")}
            crashed = sorted(started - finished)
            with open(part, "a") as f:
                for k in crashed:
                    f.write(
                        json.dumps(
                            {
                                "key": k,
                                "section": sec,
                                "status": "crashed",
                                "error": f"child process died in this case (rc={rc})",
                                **parse_key(k),
                            }
                        )
                        + "\n"
                    )
            log(f"!!! section {sec} child exited rc={rc}; crashed in: {crashed or 'none'}")
            if len(recs) == n_before and not crashed:
                break  # no progress: do not loop
        carry = max(0.0, sec_deadline - time.time())
    return runs


def parse_key(k):
    p = k.split("|")
    d = {"impl": p[1] if len(p) > 1 else "", "variant": p[2] if len(p) > 2 else ""}
    if len(p) > 4:
        d["dtype"] = p[3]
        try:
            d["shape"] = [int(v) for v in p[4].split("x")]
        except Exception:
            pass
    return d


def collect(workdir, sections):
    out = {"meta": {}, "adaptations": None}
    for sec in sections:
        recs = read_part(os.path.join(workdir, f"{sec}.jsonl"))
        keep = {}
        for r in recs:
            k = r.get("key", "")
            if k == "meta":
                out["meta"] = r.get("meta", {})
                out["adaptations"] = r.get("adaptations")
                continue
            if not k or k.endswith("#started"):
                continue
            keep[k] = r  # last record of a key wins
        out[sec] = list(keep.values())
    return out


def op_of(sec, r):
    """What a record computes, beyond its section: apply's mul or mul_relu, gemm's operand layout."""
    v = r.get("variant") or ""
    if sec == "apply":
        return v.split()[0].removeprefix("fast_")  # samples/fast_add.cute's fast_mul, fast_mul_relu
    if sec == "gemm":
        return v.split()[-1] if r.get("impl") == "torch" else v.split("_")[1] if v.count("_") >= 2 else v
    return ""


def annotate_ratios(res):
    """For each cutec record: the best peer (torch, Triton, CuTe DSL) in the same cell (section,
    operation, dtype, shape) and cutec's ratio to it (of GB/s, or of TFLOP/s for gemm)."""
    for sec in SECTIONS:
        recs = [r for r in res.get(sec, []) if r.get("status") == "ok"]
        field = "tflops" if sec == "gemm" else "gbps"
        cell = lambda r: (op_of(sec, r), r.get("dtype"), tuple(r.get("shape") or ()))  # noqa: E731
        for r in recs:
            if r.get("impl") != "cutec" or r.get(field) is None:
                continue
            peers = [
                p
                for p in recs
                if p.get("impl") != "cutec" and not p.get("not_a_peer") and p.get(field) and cell(p) == cell(r)
            ]
            if peers:
                best = max(peers, key=lambda p: p[field])
                r["best_peer"] = f"{best['impl']}:{best['variant']}"
                r["ratio_to_best_peer"] = r[field] / best[field]


def fmt_cell(r, field="gbps"):
    if r is None:
        return "-"
    st = r.get("status")
    if st == "ok":
        v = r.get(field)
        if not isinstance(v, (int, float)):
            return "?"
        ratio = f" ({r['ratio_to_best_peer']:.2f})" if r.get("ratio_to_best_peer") is not None else ""
        return (f"{v:.1f}" if field == "tflops" else f"{v:.0f}") + ratio
    return {"MISMATCH": "MISMATCH", "error": "ERR", "skipped": "skip", "crashed": "CRASH", "n/a": "n/a"}.get(
        st, str(st)
    )


def summary(res, runs, cpu=False):
    L = []
    m = res.get("meta", {})
    L.append("=" * 100)
    L.append(
        f"cutec bench: {m.get('device', 'cpu' if cpu else '?')} | torch {m.get('torch')} | triton {m.get('triton')} | "
        f"cutec {m.get('cutec')} | cutlass-dsl {m.get('nvidia-cutlass-dsl')} | cuda-bindings {m.get('cuda-bindings')} | "
        f"tvm-ffi {m.get('apache-tvm-ffi')} | L2 {m.get('l2_bytes', 0) / 2**20:.0f} MiB"
    )
    if m.get("import_err"):
        L.append(f"import errors: {m['import_err']}")
    for r in res.get("copy", []):
        L.append(
            f"copy {r.get('bytes', 0) / 2**30:.3g} GiB torch copy_: {fmt_cell(r)} GB/s "
            f"(median {r.get('median_ms', 0) or 0:.3f} ms, read+write)"
        )

    def table(sec, title, cols, rows_of, field="gbps"):
        recs = res.get(sec, [])
        if not recs:
            return
        L.append(title)
        L.append(f"{'impl:variant':30s}" + "".join(f"{c[0]:>16s}" for c in cols))
        for label, pick in rows_of(recs):
            cells = []
            for c in cols:
                cands = [r for r in recs if pick(r) and c[1](r)]
                ok = [r for r in cands if r.get("status") == "ok"]
                best = max(ok, key=lambda r: r.get(field) or 0) if ok else (cands[0] if cands else None)
                cells.append(fmt_cell(best, field))
            L.append(f"{label:30s}" + "".join(f"{x:>16s}" for x in cells))

    def rows(recs):
        seen, out = [], []
        for r in recs:
            impl, v = r.get("impl"), r.get("variant")
            if impl == "triton":
                # Triton configurations collapse into one row per operation ("mul B1024w4": mul).
                op_of_config = lambda variant: variant.split()[0] if " " in variant else ""  # noqa: E731
                op = op_of_config(v)
                lab = "triton:best" + (f" {op}" if op else "")
                if lab not in seen:
                    seen.append(lab)
                    out.append(
                        (lab, lambda r, op=op: r.get("impl") == "triton" and op_of_config(r.get("variant") or "") == op)
                    )
            else:
                lab = f"{impl}:{v}" + (" (not a peer)" if r.get("not_a_peer") else "")
                if lab not in seen:
                    seen.append(lab)
                    out.append((lab, lambda r, impl=impl, v=v: r.get("impl") == impl and r.get("variant") == v))
        return out

    def shp(r):
        return "x".join(map(str, r.get("shape") or []))

    short = {"bfloat16": "bf16", "float16": "f16", "float32": "f32"}

    def columns(sec, by_dtype):
        """One column per (dtype, shape) of the section's records: `f16:2048` (dtype and first
        extent) when by_dtype, else the shape; sorted by dtype, then size."""
        cols = []
        for r in res.get(sec, []):
            key = (r.get("dtype"), shp(r))
            if key not in [c[2] for c in cols]:
                lab = f"{short.get(key[0], key[0])}:{(r.get('shape') or [0])[0]}" if by_dtype else key[1]
                cols.append((lab, lambda x, k=key: (x.get("dtype"), shp(x)) == k, key))
        cols.sort(key=lambda c: (c[2][0] or "", [int(v) for v in c[2][1].split("x") if v.isdigit()]))
        return cols

    L.append(
        "cells: GB/s (TFLOP/s for gemm), median; for cutec, (ratio to the best peer in the cell: torch, Triton or CuTe DSL)"
    )
    for sec, title, by_dtype, field in (
        ("add", "add C=A+B  GB/s = 3*numel*bytes/t (f16:2048 = fp16 2048x2048)", True, "gbps"),
        ("apply", "apply C=A*B, relu(A*B) fp16  GB/s = 3*numel*2/t", True, "gbps"),
        ("reduce", "row sum fp32  GB/s = M*N*4/t", False, "gbps"),
        ("reduce_nd", "sum over mode 1 of BxRxA fp32  GB/s = B*R*A*4/t", False, "gbps"),
        ("gemm", "gemm C=A@B  TFLOP/s = 2*M*N*K/t (bf16:4096 = bf16 4096^3)", True, "tflops"),
    ):
        table(sec, title, columns(sec, by_dtype), rows, field)

    best_tr = {}
    for sec in ("add", "reduce"):
        for r in res.get(sec, []):
            if r.get("impl") == "triton" and r.get("status") == "ok":
                k = (sec, r.get("dtype"), shp(r))
                if k not in best_tr or r["gbps"] > best_tr[k]["gbps"]:
                    best_tr[k] = r
    if best_tr:
        L.append(
            "triton best config: "
            + "; ".join(f"{k[0]} {short.get(k[1], k[1])}:{k[2]}={v['variant']}" for k, v in best_tr.items())
        )
    comp = res.get("compile", [])
    if comp:
        L.append("compile wall s (first / second compile; first call after compile):")
        for r in comp:
            if r.get("status") != "ok":
                L.append(
                    f"  {r.get('impl')}:{r.get('variant')}: {fmt_cell(r)} {' '.join(str(r.get('error', '')).split())[:140]}"
                )
                continue
            if r.get("impl") == "cute":
                L.append(
                    f"  cute:{r['variant']:14s} {r['first_s']:.3f} / {r['second_s']:.3f}; first call "
                    f"{r.get('first_call_s', 0):.3f}{'  (first compile in process)' if r.get('process_first_compile') else ''}"
                )
            else:
                L.append(f"  triton:{r['variant']}: first call {r['first_s']:.3f}, second {r['second_s']:.4f}")
        ims = m.get("import_s", {})
        if ims:
            L.append("  import s: " + ", ".join(f"{k} {v:.2f}" for k, v in ims.items()))
    lau = res.get("launch", [])
    if lau:
        L.append(
            f"host launch overhead, tiny {TINY_SHAPE[0]}x{TINY_SHAPE[1]} fp32 add, back-to-back calls, median round: "
            "us/call incl. final sync | enqueue only | GPU median"
        )
        goal = [
            r
            for r in lau
            if r.get("impl") == "cutec"
            and r.get("variant") == "tv host call (torch tensors)"
            and r.get("status") == "ok"
        ]
        if goal:
            us = goal[0]["per_call_us"]
            L.append(
                f"  cutec goal <= 4 us per call from Python with torch tensors: {us:.2f} us, {'MET' if us <= 4.0 else 'NOT MET'}"
            )
        for r in lau:
            if r.get("status") == "ok":
                g = r.get("gpu_median_us")
                L.append(
                    f"  {r['impl'] + ':' + r['variant']:42s} {r['per_call_us']:9.2f} | {r['enqueue_us']:9.2f} | "
                    f"{(f'{g:.2f}' if g is not None else '-'):>7s}  (n={r.get('calls')}, {r.get('rounds', 1)} rounds)"
                )
            else:
                L.append(
                    f"  {r.get('impl', '') + ':' + r.get('variant', ''):42s} {fmt_cell(r)} {' '.join(str(r.get('error', '')).split())[:120]}"
                )
    lag = [
        r
        for sec in ("copy", "add", "reduce")
        for r in res.get(sec, [])
        if r.get("status") == "ok" and (r.get("queue_ahead_frac") is not None) and r["queue_ahead_frac"] < 1.0
    ]
    if lag:
        L.append(
            f"timing note: {len(lag)} measurement(s) where the GPU caught up with the host inside a batch "
            f"(host launch time may be in those numbers): "
            + ", ".join(f"{r.get('impl')}:{r.get('variant')}:{r.get('dtype', '')[-2:]}:{shp(r)}" for r in lag[:8])
        )
    bad = [r for sec in SECTIONS for r in res.get(sec, []) if r.get("status") not in ("ok", "n/a")]
    L.append(f"cases: {sum(len(res.get(s, [])) for s in SECTIONS)} recorded, {len(bad)} not ok")
    for r in bad[:25]:
        L.append(f"  {r.get('status')}: {r.get('key')}: {' '.join(str(r.get('error', '')).split())[:140]}")
    if len(bad) > 25:
        L.append(f"  ... {len(bad) - 25} more in the JSON")
    rr = [f"{x['section']}#{x['attempt']}:rc={x['rc']},{x['wall_s']}s" for x in runs]
    L.append("children: " + " ".join(rr) + f" | total {time.time() - T0:.0f}s")
    return "\n".join(L)


def parent_main(args):
    workdir = args.workdir or os.path.join("/tmp", f"bench_peers_{os.getpid()}")
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir, exist_ok=True)
    log(
        f"bench_peers parent: sections {args.sections}, budget {args.time_budget}s, parts in {workdir}, "
        f"TRITON_CACHE_DIR={os.environ.get('TRITON_CACHE_DIR')} (cleared)"
    )
    runs = run_sections(args, workdir)
    res = collect(workdir, args.sections)
    annotate_ratios(res)
    res["child_runs"] = runs
    res["total_s"] = time.time() - T0
    res["argv"] = sys.argv
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)) or ".", exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(sanitize(res), f, indent=1)
        log(f"wrote {args.out}")
    print(summary(res, runs, cpu=args.cpu), flush=True)
    mism = [r["key"] for sec in SECTIONS for r in res.get(sec, []) if r.get("status") == "MISMATCH"]
    if mism:
        print(f"!!! {len(mism)} CORRECTNESS MISMATCH(ES) vs torch: {', '.join(mism)[:600]}  (exit code 2)", flush=True)
        return 2
    return 0


# ----------------------------------------------------------------------------
# CPU self-test
# ----------------------------------------------------------------------------
def cpu_selftest(args):
    import warnings

    warnings.filterwarnings("ignore", message=".*CUDA_TOOLKIT_PATH.*")
    env = Env(cpu=True)
    torch = env.torch
    fails = []
    print(f"torch {torch.__version__}; import s {env.import_s}; import errors {env.import_err}")
    if env.cute is None:
        fails.append("import cutlass")
    else:
        import cutlass.base_dsl.compiler as C

        class ReachedJit(Exception):
            pass

        seen = {}

        def fake_jit(self, module, opt_level=2, shared_libs=()):
            seen["binary"] = "kernels_binary" in str(module)  # the embedded cubin/fatbin global
            raise ReachedJit("compiled; stopped where the JIT needs a GPU")

        C.Compiler.jit = fake_jit

        def try_compile(name, fn, *a, expect_binary=True, **kw):
            seen.clear()
            t = time.perf_counter()
            out = []
            try:
                with captured_stdout(out):
                    env.cute.compile(fn, *a, **kw)
                res = "UNEXPECTED: compiled and JIT-ed without a GPU"
                ok = False
            except Exception as e:
                chain, c = [], e
                while c is not None:
                    chain.append(f"{type(c).__name__}: {str(c)[:300]}")
                    c = c.__cause__ or c.__context__
                ok = any("ReachedJit" in x for x in chain) and (
                    expect_binary is None or seen.get("binary") == expect_binary
                )
                res = (
                    (
                        "ok (sm_90a cubin built; stopped at the JIT step)"
                        if expect_binary
                        else "ok (traced and lowered; stopped at the JIT step)"
                    )
                    if ok
                    else f"FAIL binary={seen.get('binary')} " + " <- ".join(chain)[:1200]
                )
            print(f"  {name:44s} {time.perf_counter() - t:6.2f}s {res}")
            if not ok:
                fails.append(name)
            return out[0] if out else ""

        # layout algebra printed at trace time, no GPU
        printed = try_compile("layout algebra demo (no kernel)", _layout_demo(env), expect_binary=None)
        print("   " + printed.strip().replace("\n", "\n   "))

        def fd(t):
            return env.from_dlpack(t, assumed_align=16)

        for dname in ADD_DTYPES:
            for M, N in ADD_SHAPES + [TINY_SHAPE]:
                a = torch.empty(M, N, dtype=env.dt(dname))
                for v, fname in CUTE_ADD_VARIANTS.items():
                    try_compile(f"add {v} {dname} {M}x{N}", getattr(env.S, fname), fd(a), fd(a), fd(a))
                if env.tvm_ffi is not None:

                    def fdt(t):
                        return env.from_dlpack(t, assumed_align=16, enable_tvm_ffi=True)

                    try_compile(
                        f"add tv003+tvmffi {dname} {M}x{N}",
                        env.S.elementwise_add,
                        fdt(a),
                        fdt(a),
                        fdt(a),
                        options="--enable-tvm-ffi",
                    )
        for M, N in REDUCE_SHAPES:
            x = torch.empty(M, N)
            o = torch.empty(M)
            try_compile(f"reduce simple000 {M}x{N}", env.S.reduce_sum, env.from_dlpack(x), env.from_dlpack(o))
            obj = env.S.ReduceSumTiledCopy((M, N), env.cutlass.Float32, dim=-1)
            try_compile(f"reduce tiledcopy000 {M}x{N}", obj, env.from_dlpack(x), env.from_dlpack(o), env.stream())
    # Triton kernels in the interpreter (TRITON_INTERPRET=1 was set before import)
    if env.TP is None:
        fails.append("import triton")
    else:
        TP = env.TP
        for dname in ADD_DTYPES:
            for n in (4096, 4096 + 37):
                a = torch.randn(n, dtype=env.dt(dname))
                b = torch.randn(n, dtype=env.dt(dname))
                for blk, nw in TP.ADD_CONFIGS:
                    c = torch.full((n,), float("nan"), dtype=env.dt(dname))
                    TP.launch_add(a, b, c, blk, nw)
                    err = relerr(c, a.double() + b.double())
                    ok = err <= TOL[dname] and torch.equal(c, a + b)
                    print(
                        f"  triton add {dname} n={n} B{blk}w{nw}: relerr {err:.2e} equal_to_torch "
                        f"{torch.equal(c, a + b)} {'ok' if ok else 'FAIL'}"
                    )
                    if not ok:
                        fails.append(f"triton add {dname} {n} {blk}")
        for M, N in [(64, 256), (8, 4096), (5, 1000)]:
            x = torch.randn(M, N)
            for bm, bn, nw in TP.ROWSUM_CONFIGS:
                if bn > max(N, 256) or bm > M:
                    continue
                o = torch.full((M,), float("nan"))
                TP.launch_row_sum(x, o, bm, bn, nw)
                err = relerr(o, x.double().sum(-1))
                ok = err <= TOL["reduce"]
                print(f"  triton row_sum {M}x{N} M{bm}N{bn}w{nw}: relerr {err:.2e} {'ok' if ok else 'FAIL'}")
                if not ok:
                    fails.append(f"triton rowsum {M}x{N} {bm},{bn}")
    # table formatting on synthetic records
    fake = {
        "meta": {"device": "FAKE", "torch": torch.__version__, "l2_bytes": env.l2},
        "copy": [{"status": "ok", "gbps": 2900.0, "median_ms": 0.74, "bytes": COPY_BYTES}],
        "add": [],
        "reduce": [],
        "compile": [],
        "launch": [],
    }
    for M, N in ADD_SHAPES:
        for dname in ADD_DTYPES:
            for impl, v in [
                ("torch", "a+b"),
                ("triton", "B1024w4"),
                ("triton", "B4096w8"),
                ("cute", "tv003"),
                ("cute", "naive003"),
            ]:
                fake["add"].append(
                    {
                        "key": f"add|{impl}|{v}|{dname}|{M}x{N}",
                        "impl": impl,
                        "variant": v,
                        "dtype": dname,
                        "shape": [M, N],
                        "status": "ok" if v != "naive003" else "MISMATCH",
                        "gbps": 1000.0 + M / 100,
                        "error": "relerr 1e-1",
                    }
                )
    fake["compile"].append(
        {
            "impl": "cute",
            "variant": "tv003",
            "status": "ok",
            "first_s": 1.2,
            "second_s": 0.4,
            "first_call_s": 0.01,
            "process_first_compile": True,
        }
    )
    fake["launch"].append(
        {
            "impl": "cute",
            "variant": "tv003 compiled",
            "status": "ok",
            "per_call_us": 12.0,
            "enqueue_us": 11.0,
            "gpu_median_us": 2.1,
            "calls": 1000,
        }
    )
    txt = summary(fake, [{"section": "add", "attempt": 1, "rc": 0, "wall_s": 1.0}], cpu=True)
    print(txt)
    print(f"selftest: {len(fails)} failures" + (f": {fails}" if fails else ""))
    print(f"{0 if fails else 1} passed, {len(fails)} failed")
    return 1 if fails else 0


def _layout_demo(env):
    cute = env.cute

    @cute.jit
    def layout_demo():
        A = cute.make_layout((6, 2), stride=(8, 2))
        B = cute.make_layout((4, 3), stride=(3, 1))
        print("composition((6,2):(8,2), (4,3):(3,1)) =", cute.composition(A, B))
        thr = cute.make_layout((4, 32), stride=(32, 1))
        val = cute.make_layout((4, 8), stride=(8, 1))
        tiler, tv = cute.make_layout_tv(thr, val)
        print("make_layout_tv((4,32):(32,1), (4,8):(8,1)) =", tiler, tv)

    return layout_demo


# ----------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="JSON file for the full results")
    ap.add_argument(
        "--cubins", help="folder of the samples' cubins (cutec rows are ERR without it; also $CUTEC_CUBINS)"
    )
    ap.add_argument(
        "--sections",
        default=",".join(SECTIONS),
        help=f"comma-separated subset of {','.join(SECTIONS)} (default: all, in this order)",
    )
    ap.add_argument(
        "--time-budget",
        type=float,
        default=400.0,
        help="seconds for all sections together (default 400; children are killed past it)",
    )
    ap.add_argument("--max-attempts", type=int, default=3, help="child relaunches per section after a crash")
    ap.add_argument("--launch-calls", type=int, default=1000, help="calls per round of the launch section")
    ap.add_argument(
        "--launch-rounds",
        type=int,
        default=7,
        help="rounds of the launch section: its figures are the median round (the GPU machines' "
        "host times move by 2x from one round to the next)",
    )
    ap.add_argument("--workdir", help="where the per-section JSON-lines parts go (default /tmp/bench_peers_PID)")
    ap.add_argument(
        "--triton-cache-dir", default="/tmp/tc_fresh", help="TRITON_CACHE_DIR, emptied at start (default /tmp/tc_fresh)"
    )
    ap.add_argument("--cpu-selftest", action="store_true", help="CPU-only checks (see module doc)")
    ap.add_argument("--cpu-flow", action="store_true", help="whole flow on tiny CPU tensors (see module doc)")
    # child-only
    ap.add_argument("--child", choices=SECTIONS, help=argparse.SUPPRESS)
    ap.add_argument("--part", help=argparse.SUPPRESS)
    ap.add_argument("--deadline", type=float, default=float("inf"), help=argparse.SUPPRESS)
    ap.add_argument("--cpu", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    bad = [s for s in args.sections if s not in SECTIONS]
    if bad:
        ap.error(f"unknown sections {bad}; choose from {SECTIONS}")
    if args.cpu_flow:
        args.cpu = True

    activate_target_site()
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    if args.cpu or args.cpu_selftest:
        os.environ["TRITON_INTERPRET"] = "1"
        os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")
    if args.cubins:  # children inherit it
        os.environ["CUTEC_CUBINS"] = os.path.abspath(args.cubins)
    if args.child:
        return child_main(args)
    os.environ["TRITON_CACHE_DIR"] = args.triton_cache_dir
    shutil.rmtree(args.triton_cache_dir, ignore_errors=True)
    cute_cache = "/tmp/cute_dsl_cache_fresh"
    os.environ.setdefault("CUTE_DSL_CACHE_DIR", cute_cache)
    shutil.rmtree(os.environ["CUTE_DSL_CACHE_DIR"], ignore_errors=True)
    if args.cpu_selftest:
        return cpu_selftest(args)
    return parent_main(args)


if __name__ == "__main__":
    sys.exit(main())
