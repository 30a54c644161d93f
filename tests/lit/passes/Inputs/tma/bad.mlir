module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%i: i32, %map: !llvm.ptr) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(64,64):(64,1)">
      %g = "cute.alloc"() : () -> !cute.tensor<f32, "rmem", 16, "(64,64):(64,1)">
      %b = "cute.alloc"() : () -> !cute.tensor<i64, "smem", 16, "1:1">
      %f = "cute.alloc"() : () -> !cute.tensor<i32, "smem", 16, "2:1">
      "cute.tma_load"(%g, %b, %i, %map, %i, %i) : (!cute.tensor<f32, "rmem", 16, "(64,64):(64,1)">, !cute.tensor<i64, "smem", 16, "1:1">, i32, !llvm.ptr, i32, i32) -> ()
      "cute.tma_load"(%s, %f, %i, %map, %i, %i) : (!cute.tensor<f32, "smem", 16, "(64,64):(64,1)">, !cute.tensor<i32, "smem", 16, "2:1">, i32, !llvm.ptr, i32, i32) -> ()
      "cute.tma_load"(%s, %b, %i, %map) : (!cute.tensor<f32, "smem", 16, "(64,64):(64,1)">, !cute.tensor<i64, "smem", 16, "1:1">, i32, !llvm.ptr) -> ()
      "cute.tma_load"(%s, %b, %i, %map, %i, %i) : (!cute.tensor<f32, "smem", 16, "(64,64):(64,1)">, !cute.tensor<i64, "smem", 16, "1:1">, i32, !llvm.ptr, i32, i32) -> ()
      gpu.return
    }
  }
}
