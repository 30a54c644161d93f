"""Checks samples/mma_atom.cute on the GPU: one m16n8k16 bf16 MMA (host function mma_16x8x16), C = A @ B.T
against a float64 torch reference on fresh random inputs, C poisoned with NaN first.

    python3 mma_atom_check.py --lib lib/libcute_runtime.so --cubin cubin/mma_atom.cubin
Exit 0 when it matches (relative error below 1e-5 of max|C|: f32 accumulation of 16 exact bf16
products), 1 on a mismatch, 2 when torch/CUDA/the files are missing.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cubin", required=True)
    args = ap.parse_args()
    try:
        import torch
        import cutec_torch
    except ImportError as e:
        print(f"mma_atom_check: ERROR: {e}")
        return 2
    if not torch.cuda.is_available():
        print("mma_atom_check: ERROR: no CUDA device")
        return 2
    rt = cutec_torch.Runtime(args.lib)
    host = rt.host(args.cubin, "mma_16x8x16")
    torch.manual_seed(0)
    worst = 0.0
    for trial in range(5):
        a = torch.randn(16, 16, device="cuda").to(torch.bfloat16)
        b = torch.randn(8, 16, device="cuda").to(torch.bfloat16)
        c = torch.full((16, 8), float("nan"), device="cuda", dtype=torch.float32)
        host.call(a, b, c)
        torch.cuda.synchronize()
        ref = a.double() @ b.double().T
        err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
        worst = max(worst, err if err == err else float("inf"))
    ok = worst < 1e-5
    print(f"mma_atom 16x8x16 bf16->f32: {'PASS' if ok else 'FAIL'} max_rel_err={worst:.3g} (tol 1e-5, 5 trials)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
