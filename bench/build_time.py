"""How long `cutec build` takes, whole process: the figure issue 10's budget is written in (the
median of 5 runs of `cutec build samples/gemm_sm80.cute`). Needs no GPU.

    python3 bench/build_time.py [SAMPLE.cute ...] [--runs 5] [--cutec target/release/cutec]

For each sample (default: samples/gemm_sm80.cute) it runs `cutec build SAMPLE -o TMP.cubin` RUNS
times and prints the median, the fastest and the slowest wall time, and the median CPU time of the
process and its ptxas (user + system): the build spreads its kernels over the cores, so CPU time
above the wall time says how much of it ran in parallel, and it is the steadier figure when the
machine is shared. Then one more run with `--timings` shows where the time went. A sample's
`// cutec-build: --arch ARCH` line picks its target, as scripts/gpu-suite/build.sh does.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def source_arch(path):
    with open(path) as f:
        for line in f:
            if line.strip().startswith("// cutec-build: --arch "):
                return line.split("--arch", 1)[1].strip()
    return None


def run_once(cmd):
    """Wall seconds and CPU seconds (the process and its children) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"`{' '.join(cmd)}` failed:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("samples", nargs="*", default=[os.path.join(ROOT, "samples", "gemm_sm80.cute")])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cutec", default=os.path.join(ROOT, "target", "release", "cutec"))
    args = ap.parse_args()
    if args.runs < 1:
        sys.exit("--runs must be at least 1")
    if not os.path.isfile(args.cutec):
        sys.exit(f"{args.cutec} not found: build it with `cargo build --release -p cutec`, or pass --cutec")
    print(f"cutec build, whole process, {args.runs} runs each, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.cubin")
        for sample in args.samples:
            arch = source_arch(sample)
            cmd = [args.cutec, "build", sample, "-o", out] + (["--arch", arch] if arch else [])
            runs = [run_once(cmd) for _ in range(args.runs)]
            walls = sorted(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            name = os.path.relpath(sample, ROOT)
            print(
                f"{name}: median {statistics.median(walls):.3f} s (min {walls[0]:.3f}, max {walls[-1]:.3f}), "
                f"CPU {cpu:.2f} s"
            )
            report = subprocess.run(cmd + ["--timings"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            print(
                "".join(line + "\n" for line in report.stderr.splitlines() if line.startswith(("timings", "  "))),
                end="",
            )


if __name__ == "__main__":
    main()
