"""Checks samples/mma_atom.cute on the GPU: one MMA of each SM80 atom that runs on the H100 (host functions
mma_16x8x16 bf16->f32, mma_16x8x16_f16 f16->f16, mma_16x8x8_tf32 tf32->f32; mma_16x8x16_ldmatrix
loads the bf16 operands from shared memory with ldmatrix.x4 and .x2), C = A @ B.T against a float64
torch reference on fresh random inputs (tf32: the inputs with their low 13 mantissa bits cleared, as the
tensor cores read them), C poisoned with NaN first.

    python3 mma_atom_check.py --lib lib/libcute_runtime.so --cubin cubin/mma_atom.cubin
Exit 0 when every atom matches (relative error to max|C| below 1e-5 for f32 accumulation of exact
products, 2^-7 for f16 accumulation), 1 on a mismatch, 2 when torch/CUDA/the files are missing.
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
    torch.manual_seed(0)

    def tf32_truncated(x):
        # The tensor cores read a tf32 operand from a 32-bit register and ignore its low 13
        # mantissa bits.
        return (x.view(torch.int32) & ~0x1FFF).view(torch.float32)

    # (host, A shape, B shape, input dtype, C dtype, tolerance, why)
    cases = [
        ("mma_16x8x16", (16, 16), (8, 16), torch.bfloat16, torch.float32, 1e-5, "f32 accumulation of 16 exact bf16 products"),
        ("mma_16x8x16_f16", (16, 16), (8, 16), torch.float16, torch.float16, 2.0 ** -7, "f16 accumulation: each of the 16 adds rounds to 11 bits"),
        ("mma_16x8x8_tf32", (16, 8), (8, 8), torch.float32, torch.float32, 1e-5, "f32 accumulation of 8 exact tf32 products"),
        ("mma_16x8x16_ldmatrix", (16, 16), (8, 16), torch.bfloat16, torch.float32, 1e-5, "operands through shared memory, ldmatrix.x4 (A) and .x2 (B)"),
    ]
    failed = 0
    for name, sa, sb, din, dout, tol, why in cases:
        try:
            host = rt.host(args.cubin, name)
        except Exception as e:  # an older cubin without the host
            print(f"mma_atom {name}: FAIL host not found ({' '.join(str(e).split())[:200]})")
            failed += 1
            continue
        worst = 0.0
        for trial in range(5):
            a = torch.randn(*sa, device="cuda").to(din)
            b = torch.randn(*sb, device="cuda").to(din)
            c = torch.full((16, 8), float("nan"), device="cuda", dtype=dout)
            host.call(a, b, c)
            torch.cuda.synchronize()
            if din == torch.float32:
                a, b = tf32_truncated(a), tf32_truncated(b)
            ref = a.double() @ b.double().T
            err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
            worst = max(worst, err if err == err else float("inf"))
        ok = worst < tol
        failed += not ok
        print(f"mma_atom {name} {str(din).split('.')[-1]}->{str(dout).split('.')[-1]}: {'PASS' if ok else 'FAIL'} max_rel_err={worst:.3g} (tol {tol:.3g}: {why}; 5 trials)")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
