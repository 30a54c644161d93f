// `cute.tma_store` errors from cute-verify, each at its op; the last op is valid. The box check
// depends on the element type: (8,4):(4,1) is 16 bytes a row in f32 (valid), 8 in bf16.
// CHECK: bad.mlir:17:7: error: the source of `cute.tma_store` is a shared-memory tensor, not a gmem tensor
// CHECK: bad.mlir:18:7: error: `cute.tma_store` takes one coordinate per mode of its box (64,64):(64,1) (1 to 5), found 3
// CHECK: bad.mlir:19:7: error: `cute.tma_store` takes one coordinate per mode of its box (64,64):(64,1) (1 to 5), found 0
// CHECK: bad.mlir:20:7: error: the source of `cute.tma_store`, (8,4):(4,1) of bf16, is not a box TMA reads: each mode one static extent of 1 to 256 at one stride, the stride-1 mode a multiple of 16 bytes long
// CHECK: bad.mlir:21:7: error: the source of `cute.tma_store`, (512,4):(4,1) of f32, is not a box TMA reads
// CHECK-NOT: bad.mlir:22
// CHECK-NOT: bad.mlir:23
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @bad(%i: i32, %map: !llvm.ptr, %g: !cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">) kernel {
      %s = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(64,64):(64,1)">
      %x = "cute.alloc"() : () -> !cute.tensor<bf16, "smem", 16, "(8,4):(4,1)">
      %y = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(512,4):(4,1)">
      %z = "cute.alloc"() : () -> !cute.tensor<f32, "smem", 16, "(8,4):(4,1)">
      "cute.tma_store"(%g, %map, %i, %i) : (!cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">, !llvm.ptr, i32, i32) -> ()
      "cute.tma_store"(%s, %map, %i, %i, %i) : (!cute.tensor<f32, "smem", 16, "(64,64):(64,1)">, !llvm.ptr, i32, i32, i32) -> ()
      "cute.tma_store"(%s, %map) : (!cute.tensor<f32, "smem", 16, "(64,64):(64,1)">, !llvm.ptr) -> ()
      "cute.tma_store"(%x, %map, %i, %i) : (!cute.tensor<bf16, "smem", 16, "(8,4):(4,1)">, !llvm.ptr, i32, i32) -> ()
      "cute.tma_store"(%y, %map, %i, %i) : (!cute.tensor<f32, "smem", 16, "(512,4):(4,1)">, !llvm.ptr, i32, i32) -> ()
      "cute.tma_store"(%z, %map, %i, %i) : (!cute.tensor<f32, "smem", 16, "(8,4):(4,1)">, !llvm.ptr, i32, i32) -> ()
      "cute.tma_store"(%s, %map, %i, %i) : (!cute.tensor<f32, "smem", 16, "(64,64):(64,1)">, !llvm.ptr, i32, i32) -> ()
      gpu.return
    }
  }
}
