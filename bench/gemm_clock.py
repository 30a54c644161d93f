#!/usr/bin/env python3
"""The GEMM's work per SM clock, beside its MMA instruction's peak rate and torch.matmul.

samples/gemm_sm80.cute's kernels (or, --sm90, the Hopper GEMM's, samples/gemm_sm90_persistent.cute's)
and any variants beside the rate at which the tensor cores retire their MMA instruction
(bench/kernels/mma_peak.cute: mma.sync; wgmma_peak.cute: wgmma) and torch.matmul.

    python3 bench/gemm_clock.py CUBIN_DIR [--sm90] [--gemm A.cubin,B.cubin] [--shapes 4096,8192]
                                [--layouts tn,nt,nn] [--dtypes bf16,f16] [--seconds 3] [--burst]

CUBIN_DIR holds gemm_sm80.cubin and mma_peak.cubin, or for --sm90 gemm_sm90_persistent.cubin and
wgmma_peak.cubin (scripts/gpu-suite/build-python.sh puts all four in .device/python/cubin,
scripts/gpu-suite/build.sh in .device/suite/cubin); --gemm adds variants built from edited copies
of the sample. --sm90 times the four layouts (tn,nt,nn,tt) unless --layouts says otherwise.

The H100 SXM's datasheet peak, 989.4 TFLOP/s dense bf16 at 1830 MHz on 132 SMs, is 4096 FLOP per SM
per clock (989.4e12 / (1.83e9 x 132)), for wgmma; mma.sync measured 2644 (docs/tutorial.md §17.2).
The peak kernels measure what this GPU's SMs actually retire, beside which the GEMM's share is printed.

Why per clock: on the H100 both cutec's mma.sync kernel and cuBLAS's run at the board's power
limit (about 700 W), so the SM clock moves with the load, the temperature and the seconds before
(1300 to 1800 MHz in one run), and TFLOP/s move with it. FLOP per SM per clock cycle does not
(within a few percent between runs and machines): it is what the kernel's instructions achieve, comparable between
variants and with the MMA's issue rate, and the clock it runs at says what its power costs.

How: each implementation runs back to back for --seconds (operands rotated beyond L2, every
result checked against a float64 reference first) while nvidia-smi samples the SM clock and the
board power every 20 ms; the first quarter (the clock settling) is left out of both the clock and
the timing. This is the sustained rate, below what bench.py's batches (15-150 ms behind an idle
spin) see for either kernel: use bench.py or gemm_variants.py for TFLOP/s and the cuBLAS ratio.

--burst shows the regime in between, where bench.py's batches sit: after half a second idle, 80
calls back to back, one CUDA event pair each, TFLOP/s per 8 calls, so that one sees when each
kernel meets the power limit and how far its rate falls there (docs/tutorial.md §17.2).
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as B  # noqa: E402

SMS = 132  # H100 SXM; read from the device below


class Peak:
    """A peak kernel of bench/kernels: its host `name(A, B, C, iters)`, every block of 128 rows of C
    computing iters x (A @ B^T) for A (128, k) and B (256, k) bf16, `iters` per timed call."""

    def __init__(self, name, instruction, k, iters):
        self.name, self.instruction, self.k, self.iters = name, instruction, k, iters

    def flop(self, blocks):
        return blocks * self.iters * 2 * 128 * 256 * self.k


# sample -> (its cubin, the peak kernel of its MMA instruction); the iterations a call: mma_peak's
# 2000 k-blocks about 1.5 ms at 1.7 GHz, wgmma_peak's 3000 k-tiles 1.7 ms at 4096 FLOP/clk and 1.8 GHz.
KINDS = {
    "sm80": ("gemm_sm80", Peak("mma_peak", "mma.sync", 16, 2000)),
    "sm90": ("gemm_sm90_persistent", Peak("wgmma_peak", "wgmma", 64, 3000)),
}


def sustained(torch, fn, seconds):
    """(mean SM MHz, ms per call, mean W) while fn runs back to back for `seconds`: nvidia-smi
    samples the clock every 20 ms; the first quarter of the samples (the clock settling) is
    dropped, and the calls are timed over the same span."""
    smi = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits", "-lms", "20"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(0.2)
        start = time.time()
        settle = start + seconds / 4
        n, t0 = 0, None
        Ev = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
        while time.time() - start < seconds:
            if t0 is None and time.time() >= settle:
                t0 = Ev()
                t0.record()
                n = 0
            fn()
            n += 1
            if n % 8 == 0:
                torch.cuda.synchronize()
        if t0 is None:
            sys.exit(f"one call took more than {seconds * 0.75:.1f} s: raise --seconds")
        t1 = Ev()
        t1.record()
        torch.cuda.synchronize()
        ms = t0.elapsed_time(t1) / n
    finally:
        smi.terminate()
    rows = [tuple(map(float, line.split(","))) for line in smi.communicate()[0].split("\n") if line.count(",") == 1]
    rows = rows[len(rows) // 4 :]
    if not rows:
        sys.exit("nvidia-smi gave no clock samples: no rates measured")
    return statistics.mean(r[0] for r in rows), ms, statistics.mean(r[1] for r in rows)


def per_clock(torch, fn, flop, seconds):
    """(FLOP/clk/SM, TFLOP/s, MHz, W) of fn run back to back for `seconds`."""
    fn()
    torch.cuda.synchronize()
    mhz, ms, watts = sustained(torch, fn, seconds)
    return flop / (ms * 1e-3 * mhz * 1e6) / SMS, flop / ms / 1e9, mhz, watts


def burst(torch, calls, flop, n=80, idle_s=0.5):
    """TFLOP/s of each tenth of n back-to-back calls started after idle_s of idle GPU (a short
    spin first, so that the host has queued the calls before the GPU reaches them)."""
    time.sleep(idle_s)
    evs = B.queue_timed(torch, calls, 0, n, spin_ms=3.0)
    torch.cuda.synchronize()
    rates = [flop / (s.elapsed_time(e) * 1e-3) / 1e12 for s, e in evs]
    return [statistics.mean(rates[i : i + n // 10]) for i in range(0, n, n // 10)]


def checked_cells(a, torch, cutec, sample):
    """bench.gemm_cells of the sample and the --gemm variants, the cells no variant has left out;
    exits at the first wrong result."""
    mods = [(sample, cutec.load(os.path.join(a.cubins, f"{sample}.cubin")))]
    mods += [(os.path.basename(p).removesuffix(".cubin"), cutec.load(p)) for p in a.gemm.split(",") if p]
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    cells = B.gemm_cells(torch, mods, map(int, a.shapes.split(",")), a.layouts.split(","), a.dtypes.split(","), l2)
    for layout, dname, s, flop, impls, errs, tol in cells:
        if len(impls) == 1:
            continue  # no cutec module has this cell (the sample has gemm_nn_bf16 only)
        bad = [f"{label} (relerr {errs[label]:.2e})" for label, _ in impls if not errs[label] <= tol]
        if bad:
            sys.exit(f"{layout} {dname} {B.gemm_shape_text(s)}: wrong results from {', '.join(bad)}: no rates measured")
        yield f"{layout} {dname} {B.gemm_shape_text(s)}", flop, impls


def peak_rate(a, torch, cutec, peak):
    """(FLOP/clk/SM, TFLOP/s, MHz, W) of the peak kernel, one block per SM, checked first."""
    f = cutec.load(os.path.join(a.cubins, f"{peak.name}.cubin")).host(peak.name)
    pa = torch.randn(128, peak.k, device="cuda").bfloat16()
    pb = torch.randn(256, peak.k, device="cuda").bfloat16()
    pc = torch.empty(SMS * 128, 256, device="cuda")
    # Check it first: every block's tile is iters * (A @ B^T) in f32.
    f(pa, pb, pc, 3)
    ref = 3 * (pa.double() @ pb.double().t())
    err = ((pc[:128].double() - ref).abs().max() / ref.abs().max()).item()
    if not err < 1e-5 or not torch.equal(pc[:128], pc[-128:]):
        sys.exit(f"{peak.name} is wrong (relerr {err:.2e}): no rates measured")
    return per_clock(torch, lambda: f(pa, pb, pc, peak.iters), peak.flop(SMS), a.seconds)


def main():
    global SMS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "cubins", help="folder with gemm_sm80.cubin and mma_peak.cubin (--sm90: gemm_sm90_persistent, wgmma_peak)"
    )
    ap.add_argument(
        "--sm90", action="store_true", help="the Hopper GEMM (samples/gemm_sm90_persistent.cute) and wgmma's peak"
    )
    ap.add_argument("--gemm", default="", help="comma-separated variants of the sample to time beside it")
    ap.add_argument("--shapes", default="4096,8192", help="M = N = K per shape")
    ap.add_argument("--layouts", default=None, help="tn,nt,nn (--sm90: tn,nt,nn,tt)")
    ap.add_argument("--dtypes", default="bf16,f16")
    ap.add_argument("--seconds", type=float, default=3.0, help="how long each implementation runs")
    ap.add_argument("--burst", action="store_true", help="TFLOP/s through a burst of 80 calls after idle instead")
    a = ap.parse_args()
    sample, peak = KINDS["sm90" if a.sm90 else "sm80"]
    a.layouts = a.layouts or ("tn,nt,nn,tt" if a.sm90 else "tn,nt,nn")
    import torch
    import cutec

    SMS = torch.cuda.get_device_properties(0).multi_processor_count

    if a.burst:
        return main_burst(a, torch, cutec, sample)
    pk, ptf, pmhz, pw = peak_rate(a, torch, cutec, peak)
    print(
        f"{peak.instruction} issue rate (bench/kernels/{peak.name}.cute, no loads): {pk:.0f} FLOP/clk/SM "
        f"({ptf:.0f} TFLOP/s at {pmhz:.0f} MHz, {pw:.0f} W; {SMS} SMs)"
    )

    of_peak = f"of {peak.instruction}"
    print(
        f"{'cell':22s} {'implementation':20s} {'FLOP/clk/SM':>11s} {of_peak:>11s} {'TFLOP/s':>8s} {'MHz':>6s} {'W':>5s}"
    )
    for cell, flop, impls in checked_cells(a, torch, cutec, sample):
        for label, calls in impls:
            it = [0]

            def rotating(calls=calls, it=it):
                it[0] += 1
                calls[it[0] % len(calls)]()

            k, tf, mhz, w = per_clock(torch, rotating, flop, a.seconds)
            share = "" if label == "torch.matmul" else f"{k / pk:.0%}"
            print(f"{cell:22s} {label:20s} {k:11.0f} {share:>11s} {tf:8.1f} {mhz:6.0f} {w:5.0f}")


def main_burst(a, torch, cutec, sample):
    print("TFLOP/s of each 8 of 80 calls back to back after 0.5 s idle (3 bursts per implementation, in turn)")
    for cell, flop, impls in checked_cells(a, torch, cutec, sample):
        for _ in range(3):
            for label, calls in impls:
                tenths = " ".join(f"{x:5.0f}" for x in burst(torch, calls, flop))
                print(f"{cell:18s} {label:20s} {tenths}")


if __name__ == "__main__":
    main()
