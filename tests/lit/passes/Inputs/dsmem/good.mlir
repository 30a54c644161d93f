module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @good(%i: i32) kernel attributes {nvvm.cluster_dim = array<i32: 2, 1, 1>} {
      %s = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "32:1">
      %d = "cute.dsmem_load"(%s, %i, %i) : (!cute.tensor<f32, "smem", 16, "32:1">, i32, i32) -> f32
      %c1 = arith.constant 1 : i32
      "cute.dsmem_store"(%s, %c1, %i, %d) : (!cute.tensor<f32, "smem", 16, "32:1">, i32, i32, f32) -> ()
      gpu.return
    }
  }
}
