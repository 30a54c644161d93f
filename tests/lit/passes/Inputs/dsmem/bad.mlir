module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%i: i32, %g: !cute.tensor<f32, "gmem", 16, "?:1">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "32:1">
      %a = "cute.dsmem_load"(%g, %i, %i) : (!cute.tensor<f32, "gmem", 16, "?:1">, i32, i32) -> f32
      %b = "cute.dsmem_load"(%s, %i, %i) : (!cute.tensor<f32, "smem", 16, "32:1">, i32, i32) -> i32
      "cute.dsmem_store"(%s, %i, %i, %i) : (!cute.tensor<f32, "smem", 16, "32:1">, i32, i32, i32) -> ()
      %p = "cute.alloc"() : () -> !cute.tensor<i1, "smem", 16, "32:1">
      %c = "cute.dsmem_load"(%p, %i, %i) : (!cute.tensor<i1, "smem", 16, "32:1">, i32, i32) -> i1
      %d = "cute.dsmem_load"(%s, %i, %i) : (!cute.tensor<f32, "smem", 16, "32:1">, i32, i32) -> f32
      "cute.dsmem_store"(%s, %i, %i, %d) : (!cute.tensor<f32, "smem", 16, "32:1">, i32, i32, f32) -> ()
      gpu.return
    }
  }
}
