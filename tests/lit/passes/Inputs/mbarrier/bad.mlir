module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%i: i32) kernel {
      %f = "cute.alloc"() : () -> !cute.tensor<i32, "smem", 16, "2:1">
      "cute.mbarrier"(%f, %i, %i) {kind = "init"} : (!cute.tensor<i32, "smem", 16, "2:1">, i32, i32) -> ()
      %b = "cute.alloc"() : () -> !cute.tensor<i64, "smem", 16, "2:1">
      "cute.mbarrier"(%b, %i) {kind = "wait"} : (!cute.tensor<i64, "smem", 16, "2:1">, i32) -> ()
      "cute.mbarrier"(%b, %i) {kind = "expect"} : (!cute.tensor<i64, "smem", 16, "2:1">, i32) -> ()
      %r = "cute.alloc"() : () -> !cute.tensor<i64, "rmem", 16, "2:1">
      "cute.mbarrier"(%r, %i) {kind = "arrive"} : (!cute.tensor<i64, "rmem", 16, "2:1">, i32) -> ()
      gpu.return
    }
  }
}
