#!/usr/bin/env python3
"""Correctness check and benchmark of cutec's tensor-core GEMM host functions (samples/gemm_sm80.cute).

    python3 gemm_check.py --lib lib/libcute_runtime.so --cubin cubin/gemm_sm80.cubin [--bench] [--json OUT]
    python3 gemm_check.py --lib ... --cubin ... --list      # the cubin's host functions; no torch, no GPU

Host functions looked for (each one the cubin lacks is reported "not in cubin" and skipped):
    gemm_{tn,nn,nt}_{bf16,f16}        C has the input dtype
    gemm_{tn,nn,nt}_{bf16,f16}_f32    C is f32
Accumulation is f32 in all of them. Arguments (A, B, C), C always (M,N) row-major; A and B per layout:
    tn  CuTe's TN (both K-major): A (M,K) row-major, B (N,K) row-major;  C = A @ B.T
    nn  CuTe's/BLAS's NN (A M-major, B K-major): A given as (K,M) row-major, B (N,K) row-major;  C = A.T @ B.T
    nt  CuTe's NT (both MN-major): A given as (K,M), B as (K,N), both row-major;  C = A.T @ B
For nn/nt the tensors are passed as stored; if the host's checks refuse that view on a one-tile probe,
the transposed views of the same memory (CuTe's logical (M,K)/(N,K) modes: A.t(), B.t()) are tried
and the one used is printed. LAYOUTS below is the single place that defines all of this.

Correctness: every available host on every shape (default 128x256x64, 256x512x192, 128^3, 100x200x72,
1x8x8, 1000^3, 4096x4096x4104, 4096^3, 8192^3; 8192^3 once per (input, output) dtype pair unless
--full). Fresh random inputs
(randn * K^-1/4, so each C entry is a K-sum of variance 1), C poisoned with NaN and surrounded by NaN
guard elements, reference (A.double() @ B.double().T) on the GPU (the inputs' exact values), then
    max_rel_err = max|C - ref| / max|ref|,   tol: bf16 out 4*2^-7, f16 out 4*2^-10, f32 out 1e-3;
any NaN/inf left in C or any guard element written is a FAIL. A refusal (a C-ABI error naming the
reason, nothing launched) is printed as REFUSED; it is accepted only for shapes that are not a multiple
of --tile (default 128x256x64: BM x BN x BK of samples/gemm_sm80.cute), where a correct result is
accepted as well. A refused tile-multiple shape is a FAIL.

--bench: every available host with C of the input dtype (bf16, f16) at 4096^3 and 8192^3: median
TFLOP/s (2MNK / t) of the cutec host call and of torch.matmul (cuBLAS) on the same operands, same
layout, output written into a preallocated tensor; CUDA events around each call, warm-up first,
>= 20 timed calls, median (the method of ../shared/peers/bench_peers.py).

Exit status: 0 all PASS (REFUSED only where allowed), 1 any FAIL, 2 torch/CUDA/the runtime unavailable
or a bad argument.
"""
import argparse
import json
import math
import os
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import cutec_torch  # noqa: E402  (ctypes only: importable without torch)

T0 = time.time()
DEFAULT_SHAPES = ["128x256x64", "256x512x192", "128x128x128", "100x200x72", "1x8x8", "1000x1000x1000", "4096x4096x4104", "4096x4096x4096", "8192x8192x8192"]
BENCH_SHAPES = ["4096x4096x4096", "8192x8192x8192"]
LARGE = 8192 ** 3        # shapes with M*N*K >= this: checked once per dtype pair unless --full
GUARD = 2048             # NaN elements before and after C that must stay NaN
TOL = {"bfloat16": 4 * 2.0 ** -7, "float16": 4 * 2.0 ** -10, "float32": 1e-3}
SHORT = {"bfloat16": "bf16", "float16": "f16", "float32": "f32"}
L2_FALLBACK = 50 * 2 ** 20
SLEEP_HZ = 2.0e9         # cycles/s assumed for torch.cuda._sleep (as in bench_peers.py)


class Layout:
    """How a GEMM variant's operands are stored, passed and referenced.
    store(M,N,K) -> (shape of A, shape of B) as allocated (row-major, contiguous);
    views: functions (A, B) -> (A view, B view) to pass to the host, the first preferred;
    mm(A, B) -> (X, Y) with C = X @ Y (views of the stored operands: the reference multiplies their
    float64 copies, the benchmark gives them to torch.matmul)."""

    def __init__(self, doc, store, views, mm):
        self.doc, self.store, self.views, self.mm = doc, store, views, mm


LAYOUTS = {
    "tn": Layout("A (M,K) row-major, B (N,K) row-major (both K-major); C = A @ B.T",
                 lambda M, N, K: ((M, K), (N, K)),
                 [lambda a, b: (a, b)],
                 lambda a, b: (a, b.t())),
    "nn": Layout("A a (K,M) row-major tensor (M-major), B (N,K) row-major (K-major); C = A.T @ B.T",
                 lambda M, N, K: ((K, M), (N, K)),
                 [lambda a, b: (a, b), lambda a, b: (a.t(), b)],
                 lambda a, b: (a.t(), b.t())),
    "nt": Layout("A a (K,M) and B a (K,N) row-major tensor (both MN-major); C = A.T @ B",
                 lambda M, N, K: ((K, M), (K, N)),
                 [lambda a, b: (a, b), lambda a, b: (a.t(), b.t())],
                 lambda a, b: (a.t(), b)),
}
VIEW_NAMES = {"tn": ["as stored"], "nn": ["as stored", "A.t() (M,K):(1,M), B as stored"],
              "nt": ["as stored", "A.t() (M,K):(1,M), B.t() (N,K):(1,N)"]}
IN_OUT = [("bfloat16", "bfloat16"), ("float16", "float16"), ("bfloat16", "float32"), ("float16", "float32")]


def host_name(layout, din, dout):
    return f"gemm_{layout}_{SHORT[din]}" + ("_f32" if dout == "float32" else "")


CANDIDATES = [(host_name(l, i, o), l, i, o) for l in LAYOUTS for i, o in IN_OUT]


def parse_shape(s):
    try:
        dims = [int(x) for x in s.lower().split("x")]
    except ValueError:
        dims = []
    if len(dims) != 3 or min(dims) < 1:
        raise argparse.ArgumentTypeError(f"bad shape {s!r}: want MxNxK, e.g. 4096x4096x4096")
    return tuple(dims)


def log(*a):
    print(*a, flush=True)


def die(msg, rc=2):
    sys.stdout.flush()
    print(f"gemm_check: ERROR: {msg}", file=sys.stderr, flush=True)
    sys.exit(rc)


def fmt_shape(s):
    return "x".join(map(str, s))


# ----------------------------------------------------------------------------
# timing (bench_peers.py's method)
# ----------------------------------------------------------------------------
def n_rotations(bytes_per_set, l2, factor=4, max_sets=16):
    """Input/output sets to rotate over so that consecutive calls miss the L2 (bench_peers.py's rule:
    rotate until 4x the L2 is covered)."""
    if bytes_per_set >= factor * l2:
        return 1
    return max(2, min(max_sets, math.ceil(factor * l2 / bytes_per_set)))


def bench(torch, calls, target_s=0.3, min_reps=20, max_reps=200, batch=20):
    """Median ms per call of calls[i % len(calls)](): 4 warm-up calls (the last 3 timed on the host to
    size the run), then >= min_reps calls with one CUDA event pair around every call, in batches queued
    behind a sleep kernel so the events time the GPU and not the host launch path."""
    n = len(calls)
    calls[0]()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for i in range(1, 4):
        calls[i % n]()
    torch.cuda.synchronize()
    t_call = (time.perf_counter() - t) / 3
    reps = int(min(max_reps, max(min_reps, target_s / max(t_call, 1e-7))))
    times, i = [], 0
    while len(times) < reps:
        b = min(batch, reps - len(times))
        evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(b)]
        if hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(int(min(20.0, 0.02 * b + 0.5) * 1e-3 * SLEEP_HZ))
        for s, e in evs:
            s.record()
            calls[i % n]()
            e.record()
            i += 1
        torch.cuda.synchronize()
        times += [s.elapsed_time(e) for s, e in evs]
    times.sort()
    return {"median_ms": statistics.median(times), "min_ms": times[0], "max_ms": times[-1], "reps": len(times),
            "n_buffer_sets": n}


# ----------------------------------------------------------------------------
class Checker:
    def __init__(self, args, torch, rt):
        self.args, self.torch, self.rt = args, torch, rt
        self.dev = torch.device("cuda")
        self.gen = torch.Generator(device="cuda")
        self.gen.manual_seed(args.seed)
        self.results, self.bench_rows = [], []
        self.fails = 0
        self.dead = None                     # set when the CUDA context is unusable
        self.view_choice = {}                # host name -> index into LAYOUTS[l].views
        self.hosts = {}                      # host name -> (Host, layout, din, dout)

    # -- inputs -------------------------------------------------------------
    def operands(self, layout, din, M, N, K):
        torch = self.torch
        sa, sb = LAYOUTS[layout].store(M, N, K)
        scale = K ** -0.25
        a = torch.randn(sa, generator=self.gen, device=self.dev, dtype=getattr(torch, din)).mul_(scale)
        b = torch.randn(sb, generator=self.gen, device=self.dev, dtype=getattr(torch, din)).mul_(scale)
        return a, b

    def out_buffer(self, dout, M, N):
        """C (M,N) row-major inside a NaN buffer with GUARD elements on each side."""
        buf = self.torch.full((GUARD + M * N + GUARD,), float("nan"), device=self.dev, dtype=getattr(self.torch, dout))
        return buf, buf[GUARD:GUARD + M * N].view(M, N)

    # -- discovery ----------------------------------------------------------
    def discover(self, sigs):
        cubin = self.args.cubin
        try:
            self.rt.module(cubin)
        except cutec_torch.CuteError as e:
            self.fail_line(f"gemm: FAIL cannot load {cubin}: {e}")
            return
        for name, layout, din, dout in CANDIDATES:
            try:
                h = self.rt.host(cubin, name)
            except cutec_torch.CuteError as e:
                if e.status == cutec_torch.NOT_FOUND and name not in sigs:
                    log(f"gemm {name}: not in cubin (skipped)")
                else:
                    self.fail_line(f"gemm {name}: FAIL cannot load the host function: {e}", name=name)
                continue
            self.hosts[name] = (h, layout, din, dout)
            log(f"gemm {name}: found ({SHORT[din]} in, {SHORT[dout]} out; {LAYOUTS[layout].doc})")
            for line in sigs.get(name, []):
                log(f"    {cutec_torch.readable(line)}")
            self.choose_view(name)
        known = {c[0] for c in CANDIDATES}
        for name in sigs:
            if name.startswith("gemm") and name not in known:
                log(f"gemm {name}: in the cubin but not a name gemm_check.py knows (not checked)")

    def choose_view(self, name):
        """The first view convention the host's checks accept on a one-tile probe (no launch)."""
        h, layout, din, dout = self.hosts[name]
        views = LAYOUTS[layout].views
        self.view_choice[name] = 0
        if len(views) == 1:
            return
        M, N, K = self.args.tile
        a, b = self.operands(layout, din, M, N, K)
        _, c = self.out_buffer(dout, M, N)
        msgs = []
        for i, v in enumerate(views):
            try:
                h.check(*v(a, b), c)
                self.view_choice[name] = i
                log(f"    operands passed {VIEW_NAMES[layout][i]}" + (f" (refused as stored: {msgs[0]})" if i else ""))
                return
            except cutec_torch.CuteError as e:
                msgs.append(e.message)
        log(f"    no operand view accepted on a {fmt_shape(self.args.tile)} probe; passing them as stored: {msgs[0]}")

    # -- correctness ----------------------------------------------------------
    def fail_line(self, line, name=None, shape=None, **rec):
        self.fails += 1
        log(line)
        self.results.append(dict(rec, host=name, shape=shape, status="FAIL", line=line))

    def tile_multiple(self, M, N, K):
        tm, tn, tk = self.args.tile
        return M % tm == 0 and N % tn == 0 and K % tk == 0

    def check_case(self, name, shape):
        torch = self.torch
        h, layout, din, dout = self.hosts[name]
        M, N, K = shape
        tag = f"gemm {name} {fmt_shape(shape)}:"
        multiple = self.tile_multiple(M, N, K)
        tol = TOL[dout]
        rec = {"host": name, "shape": list(shape), "layout": layout, "in": din, "out": dout,
               "tile_multiple": multiple, "tol": tol}
        t0 = time.time()
        a, b = self.operands(layout, din, M, N, K)
        buf, c = self.out_buffer(dout, M, N)
        va, vb = LAYOUTS[layout].views[self.view_choice[name]](a, b)
        refused = None
        try:
            h.check(va, vb, c)
            h.call(va, vb, c)
        except cutec_torch.CuteError as e:
            if not e.refused:
                return self.finish(rec, "FAIL", f"{tag} FAIL {e}", t0)
            refused = e
        try:
            torch.cuda.synchronize()
        except Exception as e:     # a kernel fault: the context is unusable from here on
            self.dead = f"{name} {fmt_shape(shape)}: {' '.join(str(e).split())[:300]}"
            return self.finish(rec, "FAIL", f"{tag} FAIL kernel fault: {self.dead}", t0)
        nan_out = int((~torch.isnan(buf)).sum().item()) if refused else 0
        if refused:
            msg = f"{refused.status_name}: {refused.message}"
            rec["message"] = msg
            if nan_out:
                return self.finish(rec, "FAIL", f"{tag} FAIL refused ({msg}) but {nan_out} elements of C/guards written", t0)
            if multiple:
                return self.finish(rec, "FAIL", f"{tag} FAIL refused a multiple of the tile {fmt_shape(self.args.tile)}: {msg}", t0)
            return self.finish(rec, "REFUSED", f"{tag} REFUSED (allowed: not a multiple of the tile "
                               f"{fmt_shape(self.args.tile)}) {msg}", t0)
        guards = torch.cat([buf[:GUARD], buf[GUARD + M * N:]])
        guard_written = int((~torch.isnan(guards)).sum().item())
        nonfinite = int((~torch.isfinite(c)).sum().item())
        x, y = LAYOUTS[layout].mm(a.double(), b.double())
        ref = x @ y
        del x, y
        del a, b
        err = (c.double() - ref).abs_()
        scale = ref.abs().max().item()
        del ref
        err.nan_to_num_(nan=float("inf"), posinf=float("inf"))
        emax = err.max().item()
        rel = emax / scale if scale > 0 else float("inf")
        bad = int((err > tol * scale).sum().item())
        where = divmod(int(err.argmax().item()), N) if bad else None
        del err
        rec.update(max_rel_err=rel, max_ref=scale, bad_elements=bad, nonfinite=nonfinite, guard_written=guard_written)
        problems = []
        if nonfinite:
            problems.append(f"{nonfinite} NaN/inf elements in C (unwritten?)")
        if guard_written:
            problems.append(f"{guard_written} guard elements around C written")
        if bad:
            problems.append(f"{bad} elements over tol, worst at (m,n)={where}")
        ok = not problems and rel <= tol
        line = f"{tag} {'PASS' if ok else 'FAIL'} max_rel_err={rel:.3e} (tol {tol:.3e})"
        if problems:
            line += "; " + "; ".join(problems)
        return self.finish(rec, "PASS" if ok else "FAIL", line, t0)

    def finish(self, rec, status, line, t0):
        rec.update(status=status, line=line, wall_s=round(time.time() - t0, 3))
        self.results.append(rec)
        if status == "FAIL":
            self.fails += 1
        log(line)
        if self.torch.cuda.is_available() and rec["shape"][0] * rec["shape"][1] * rec["shape"][2] >= 4096 ** 3:
            self.torch.cuda.empty_cache()
        return status

    def run_correctness(self, shapes):
        large_done = {}
        for name in self.hosts:
            for shape in shapes:
                if self.dead:
                    self.fail_line(f"gemm {name} {fmt_shape(shape)}: FAIL not run (CUDA context unusable after {self.dead})",
                                   name=name, shape=list(shape))
                    continue
                _, layout, din, dout = self.hosts[name]
                if math.prod(shape) >= LARGE and not self.args.full:
                    first = large_done.setdefault((din, dout, shape), name)
                    if first != name:
                        log(f"gemm {name} {fmt_shape(shape)}: SKIP (large: checked once per dtype pair, by {first}; --full checks all)")
                        continue
                try:
                    self.check_case(name, shape)
                except Exception as e:      # a bug here or torch running out of memory: this case fails, go on
                    self.fail_line(f"gemm {name} {fmt_shape(shape)}: FAIL {type(e).__name__}: {' '.join(str(e).split())[:300]}",
                                   name=name, shape=list(shape))
                    try:
                        self.torch.cuda.synchronize()
                    except Exception as e2:
                        self.dead = f"{name} {fmt_shape(shape)}: {' '.join(str(e2).split())[:300]}"

    # -- benchmark ------------------------------------------------------------
    def run_bench(self, shapes, l2):
        torch = self.torch
        for name, (h, layout, din, dout) in self.hosts.items():
            if din != dout:
                continue             # torch.matmul has no bf16/f16 -> f32 output to compare with
            for shape in shapes:
                if self.dead:
                    log(f"bench {name} {fmt_shape(shape)}: not run (CUDA context unusable)")
                    continue
                M, N, K = shape
                case = f"{name} {fmt_shape(shape)}"
                row = {"case": case, "host": name, "shape": list(shape), "dtype": din}
                corr = [r["status"] for r in self.results if r.get("host") == name and r.get("shape") == list(shape)]
                row["correctness"] = corr[0] if corr else "not checked at this shape"
                if row["correctness"] != "FAIL" and any(r.get("host") == name and r.get("status") == "FAIL" for r in self.results):
                    row["correctness"] += "; FAIL at other shapes"
                esize = torch.empty((), dtype=getattr(torch, din)).element_size()
                per_set = (M * K + N * K + M * N) * esize
                # At 4096^3 one set (A, B, C: 96 MiB in bf16/f16) and at 8192^3 (384 MiB) already exceeds
                # the 50 MiB L2; bench_peers.py's rule (rotate until 4x L2 is covered) still applies:
                # 3 sets at 4096^3, 1 at 8192^3. For a GEMM that only matters for the first reads of
                # each tile: each operand tile is read N/tileN (M/tileM) times within one call anyway.
                nsets = n_rotations(per_set, l2)
                try:
                    sets = []
                    for _ in range(nsets):
                        a, b = self.operands(layout, din, M, N, K)
                        _, c = self.out_buffer(dout, M, N)
                        ct = torch.empty((M, N), device=self.dev, dtype=getattr(torch, din))
                        sets.append((a, b, c, ct))
                    view = LAYOUTS[layout].views[self.view_choice[name]]
                    try:
                        cutec_calls = [h.bind(*view(a, b), c) for a, b, c, _ in sets]
                    except cutec_torch.CuteError as e:
                        row.update(status="REFUSED", error=f"{e.status_name}: {e.message}")
                        log(f"bench {case}: REFUSED {e.status_name}: {e.message}")
                        self.bench_rows.append(row)
                        continue
                    mm = LAYOUTS[layout].mm
                    torch_calls = [(lambda a=a, b=b, ct=ct: torch.matmul(*mm(a, b), out=ct)) for a, b, _, ct in sets]
                    tc = bench(torch, cutec_calls)
                    tt = bench(torch, torch_calls)
                    flop = 2.0 * M * N * K
                    row.update(status="ok", n_buffer_sets=nsets, cutec=tc, torch=tt,
                               cutec_tflops=flop / (tc["median_ms"] * 1e-3) / 1e12,
                               torch_tflops=flop / (tt["median_ms"] * 1e-3) / 1e12)
                    row["ratio"] = row["cutec_tflops"] / row["torch_tflops"]
                    log(f"bench {case}: cutec {row['cutec_tflops']:.1f} TFLOP/s ({tc['median_ms']:.3f} ms, {tc['reps']} calls), "
                        f"torch {row['torch_tflops']:.1f} TFLOP/s ({tt['median_ms']:.3f} ms, {tt['reps']} calls), "
                        f"{nsets} buffer set(s)")
                except Exception as e:
                    row.update(status="error", error=f"{type(e).__name__}: {' '.join(str(e).split())[:300]}")
                    log(f"bench {case}: ERROR {row['error']}")
                    try:
                        torch.cuda.synchronize()
                    except Exception as e2:
                        self.dead = f"bench {case}: {' '.join(str(e2).split())[:300]}"
                self.bench_rows.append(row)
                sets = cutec_calls = torch_calls = None
                torch.cuda.empty_cache()

    def bench_table(self):
        L = ["", "---- GEMM: TFLOP/s = 2*M*N*K / median time (CUDA events per call, warm-up, >= 20 calls); "
             "torch = torch.matmul (cuBLAS) on the same operands ----",
             "| case | cutec TFLOP/s | torch TFLOP/s | ratio |", "|---|---|---|---|"]
        for r in self.bench_rows:
            note = "" if r.get("correctness") in ("PASS", None) else f" (correctness: {r.get('correctness')})"
            if r.get("status") == "ok":
                L.append(f"| {r['case']}{note} | {r['cutec_tflops']:.1f} | {r['torch_tflops']:.1f} | {r['ratio']:.2f} |")
            else:
                L.append(f"| {r['case']}{note} | {r.get('status')} | - | - |")
        for r in self.bench_rows:
            if r.get("status") == "ok":
                L.append(f"RESULT gemm host={r['host']} m={r['shape'][0]} n={r['shape'][1]} k={r['shape'][2]} "
                         f"cutec_ms={r['cutec']['median_ms']:.4f} torch_ms={r['torch']['median_ms']:.4f} "
                         f"cutec_tflops={r['cutec_tflops']:.1f} torch_tflops={r['torch_tflops']:.1f} ratio={r['ratio']:.3f}")
        return "\n".join(L)


def sanitize(o):
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {str(k): sanitize(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [sanitize(v) for v in o]
    return o


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, help="libcute_runtime.so")
    ap.add_argument("--cubin", required=True, help="the GEMM cubin (cutec build samples/gemm_sm80.cute)")
    ap.add_argument("--sizes", nargs="+", type=parse_shape, metavar="MxNxK",
                    help=f"correctness shapes (default: {' '.join(DEFAULT_SHAPES)})")
    ap.add_argument("--bench", action="store_true", help="also time cutec vs torch.matmul")
    ap.add_argument("--bench-sizes", nargs="+", type=parse_shape, metavar="MxNxK",
                    help=f"benchmark shapes (default: {' '.join(BENCH_SHAPES)})")
    ap.add_argument("--tile", type=parse_shape, default=(128, 256, 64), metavar="MxNxK",
                    help="the CTA tile: shapes that are multiples of it must be accepted (default 128x256x64: BM, BN, BK of samples/gemm_sm80.cute)")
    ap.add_argument("--full", action="store_true", help="check the 8192^3-sized shapes for every host, not once per dtype pair")
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: random, printed)")
    ap.add_argument("--json", metavar="OUT", help="write the results as JSON")
    ap.add_argument("--list", action="store_true", help="print the cubin's host functions and exit (no torch/GPU needed)")
    args = ap.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 31)
    shapes = args.sizes or [parse_shape(s) for s in DEFAULT_SHAPES]
    bshapes = args.bench_sizes or [parse_shape(s) for s in BENCH_SHAPES]

    for what, p in (("--lib", args.lib), ("--cubin", args.cubin)):
        if not os.path.isfile(p):
            die(f"{what} {p}: no such file")
    try:
        lib = cutec_torch.Lib(args.lib)
    except OSError as e:
        die(f"cannot load {args.lib}: {e}")
    try:
        manifest = lib.read_manifest(args.cubin)
    except cutec_torch.CuteError as e:
        die(f"cannot read the manifest of {args.cubin}: {e}")
    if manifest is None:
        die(f"{args.cubin} has no cutec manifest (not a cutec cubin?)")
    sigs = cutec_torch.host_signatures(manifest)
    if args.list:
        for name, lines in sigs.items():
            known = next((c for c in CANDIDATES if c[0] == name), None)
            log(f"host {name}" + (f"  [{LAYOUTS[known[1]].doc}]" if known else "  [not a GEMM name gemm_check.py checks]"))
            for line in lines:
                log(f"    {cutec_torch.readable(line)}")
        missing = [c[0] for c in CANDIDATES if c[0] not in sigs]
        log(f"not in cubin: {', '.join(missing) if missing else '(none)'}")
        return 0

    try:
        import torch
    except Exception as e:
        die(f"torch is not importable ({type(e).__name__}: {e}); gemm_check.py needs PyTorch with CUDA")
    if not torch.cuda.is_available():
        die(f"torch {torch.__version__} sees no CUDA device (torch.cuda.is_available() is False)")
    torch.empty(1, device="cuda")            # torch's context first: the runtime then opens the same primary context
    try:
        rt = cutec_torch.Runtime(args.lib)
    except cutec_torch.CuteError as e:
        die(f"the runtime cannot open device 0: {e}")
    p = torch.cuda.get_device_properties(0)
    l2 = int(getattr(p, "L2_cache_size", 0) or L2_FALLBACK)
    meta = {"device": torch.cuda.get_device_name(0), "capability": list(torch.cuda.get_device_capability(0)),
            "torch": torch.__version__, "torch_cuda": torch.version.cuda, "l2_bytes": l2, "seed": args.seed,
            "lib": os.path.abspath(args.lib), "cubin": os.path.abspath(args.cubin), "tile": list(args.tile),
            "shapes": [list(s) for s in shapes], "bench_shapes": [list(s) for s in bshapes] if args.bench else []}
    log(f"gemm_check: {meta['device']} (sm_{meta['capability'][0]}{meta['capability'][1]}), torch {torch.__version__}, "
        f"L2 {l2 / 2**20:.0f} MiB, seed {args.seed}, tile {fmt_shape(args.tile)}, cubin {args.cubin}")

    ck = Checker(args, torch, rt)
    ck.discover(sigs)
    if not ck.hosts and not ck.fails:
        ck.fail_line(f"gemm: FAIL no GEMM host function in {args.cubin} (host functions: {', '.join(sigs) or '(none)'})")
    else:
        ck.run_correctness(shapes)
        if args.bench:
            ck.run_bench(bshapes, l2)
    counts = {s: sum(1 for r in ck.results if r.get("status") == s) for s in ("PASS", "REFUSED", "FAIL")}
    if args.bench:
        log(ck.bench_table())
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)) or ".", exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(sanitize({"meta": meta, "correctness": ck.results, "bench": ck.bench_rows, "counts": counts,
                                "wall_s": round(time.time() - T0, 1)}), f, indent=1)
        log(f"wrote {args.json}")
    log(f"\ngemm_check: {counts['PASS']} PASS, {counts['REFUSED']} REFUSED (allowed), {ck.fails} FAIL "
        f"in {time.time() - T0:.1f}s")
    log("FAIL" if ck.fails else "PASS")
    return 1 if ck.fails else 0


if __name__ == "__main__":
    sys.exit(main())
