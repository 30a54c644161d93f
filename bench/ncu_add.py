"""One torch add and one cutec add of the same f16 tensors, for ncu to compare (see bench/add_variants.py)."""

import os
import sys
import torch
import cutec

m, n = (int(x) for x in (sys.argv[1] if len(sys.argv) > 1 else "2048x2048").split("x"))
dt = torch.float16 if (sys.argv[2] if len(sys.argv) > 2 else "f16") == "f16" else torch.float32
cub = os.environ.get("CUTEC_CUBINS", "cubin")
fast = cutec.load(os.path.join(cub, "fast_add.cubin"))
seed = cutec.load(os.path.join(cub, "elementwise_add.cubin"))
x, y, z = (torch.randn(m, n, device="cuda").to(dt) for _ in range(3))
for _ in range(2):
    torch.add(x, y, out=z)
    seed.vectorized_elementwise_add(x, y, z)
    fast.add_ilp(x, y, z, 1024, 1)
torch.cuda.synchronize()
