// cute-lower-to-gpu (from stmatrix.mlir): a lane's row must be 8 contiguous elements; a column of a
// row-major tile is not.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @column() kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(8,8):(8,1)">
      %c0 = arith.constant 0 : i32
      %col = "cute.view"(%s, %c0) : (!cute.tensor<bf16, "smem", 16, "(8,8):(8,1)">, i32) -> !cute.tensor<bf16, "smem", 16, "(8):(8)">
      %r = "cute.alloc"() : () -> !cute.tensor<bf16, "rmem", 16, "(8):(1)">
      // CHECK: strided.mlir:[[# @LINE + 1]]:7: error: stmatrix.x4 writes one row of 8 contiguous, 16-byte aligned elements per lane, but the destination has 8 elements proven contiguous in runs of 1 (layout (8):(8), 16-byte alignment)
      "cute.copy"(%r, %col) {op = "stmatrix.x4"} : (!cute.tensor<bf16, "rmem", 16, "(8):(1)">, !cute.tensor<bf16, "smem", 16, "(8):(8)">) -> ()
      gpu.return
    }
  }
}
