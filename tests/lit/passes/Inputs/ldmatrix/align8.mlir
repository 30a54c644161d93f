// cute-lower-to-gpu (from ldmatrix.mlir): a row known only 8-byte aligned proves runs of 4, not the
// 16 aligned bytes ldmatrix reads.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @align8() kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(16,12):(12,1)">
      %c4 = arith.constant 4 : i32
      %row = "cute.view"(%s, %c4) : (!cute.tensor<bf16, "smem", 16, "(16,12):(12,1)">, i32) -> !cute.tensor<bf16, "smem", 8, "(8):(1)">
      %r = "cute.alloc"() : () -> !cute.tensor<bf16, "rmem", 16, "(8):(1)">
      // CHECK: align8.mlir:[[# @LINE + 1]]:7: error: ldmatrix.x4.trans reads one row of 8 contiguous, 16-byte aligned elements per lane, but the source has 8 elements proven contiguous in runs of 4 (layout (8):(1), 8-byte alignment)
      "cute.copy"(%row, %r) {op = "ldmatrix.x4.trans"} : (!cute.tensor<bf16, "smem", 8, "(8):(1)">, !cute.tensor<bf16, "rmem", 16, "(8):(1)">) -> ()
      gpu.return
    }
  }
}
