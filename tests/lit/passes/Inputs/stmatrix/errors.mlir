// cute-verify (from stmatrix.mlir): stmatrix copies 16-bit elements from rmem to smem, 2 values per
// matrix from each lane into its 8-element row.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%g: !cute.tensor<bf16, "gmem", 16, "(8):(1)">) kernel {
      %sf = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(8):(1)">
      %rf = "cute.alloc"() : () -> !cute.tensor<f32, "rmem", 16, "(8):(1)">
      %s = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(8):(1)">
      %r = "cute.alloc"() : () -> !cute.tensor<bf16, "rmem", 16, "(8):(1)">
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: stmatrix.x4 moves 16-bit elements, not f32
      "cute.copy"(%rf, %sf) {op = "stmatrix.x4"} : (!cute.tensor<f32, "rmem", 16, "(8):(1)">, !cute.tensor<f32, "smem", 16, "(8):(1)">) -> ()
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: stmatrix.x4 copies from rmem to smem, not from smem to rmem
      "cute.copy"(%s, %r) {op = "stmatrix.x4"} : (!cute.tensor<bf16, "smem", 16, "(8):(1)">, !cute.tensor<bf16, "rmem", 16, "(8):(1)">) -> ()
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: stmatrix.x4.trans copies from rmem to smem, not from rmem to gmem
      "cute.copy"(%r, %g) {op = "stmatrix.x4.trans"} : (!cute.tensor<bf16, "rmem", 16, "(8):(1)">, !cute.tensor<bf16, "gmem", 16, "(8):(1)">) -> ()
      // CHECK: errors.mlir:[[# @LINE + 1]]:7: error: stmatrix.x2 takes 4 values and an 8-element row of each lane, not 8 (layout (8):(1)) into 8 (layout (8):(1))
      "cute.copy"(%r, %s) {op = "stmatrix.x2"} : (!cute.tensor<bf16, "rmem", 16, "(8):(1)">, !cute.tensor<bf16, "smem", 16, "(8):(1)">) -> ()
      gpu.return
    }
  }
}
