// RUN: not %cutec opt %s --pass cute-vectorize 2>&1 | FileCheck %s
// A fragment whose length is not the tensor's size has no width to choose: cute-verify rejects it
// when the IR is read, before cute-vectorize runs, and points at the op.
// CHECK: vectorize-errors.mlir:[[# @LINE + 5]]:12: error: a fragment of 4 elements does not match the tensor's 8 (layout 8:1)
// CHECK-NOT: vector =
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%t: !cute.tensor<f32, "gmem", 16, "8:1">) kernel {
      %v = "cute.load_frag"(%t) : (!cute.tensor<f32, "gmem", 16, "8:1">) -> vector<4xf32>
      gpu.return
    }
  }
}
