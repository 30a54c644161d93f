// RUN: not %cutec opt %s --pass cute-lower-to-gpu 2>&1 | FileCheck %s
// RUN: %cutec opt %s --pass cute-canonicalize --pass cute-lower-to-gpu | FileCheck %s --check-prefix=OK
// cute-lower-to-gpu lowers memory ops only: a CuTe tensor op must be folded by cute-canonicalize first.
// CHECK: lower-to-gpu-unfolded.mlir:[[# @LINE + 6]]:14: error: cute-lower-to-gpu: `cute.slice` is a CuTe operation; run cute-canonicalize first to fold it into memory ops
// OK: llvm.getelementptr
// OK-NOT: cute.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%t: !cute.tensor<f32, "gmem", 16, "(8,8):(8,1)">, %i: i32) kernel {
      %row = "cute.slice"(%t, %i) {args = ["(?,_)"], operandSegmentSizes = array<i32: 1, 0, 1>} : (!cute.tensor<f32, "gmem", 16, "(8,8):(8,1)">, i32) -> !cute.tensor<f32, "gmem", 16, "(8):(1)">
      %f = "cute.load_frag"(%row) : (!cute.tensor<f32, "gmem", 16, "(8):(1)">) -> vector<8xf32>
      gpu.return
    }
  }
}
