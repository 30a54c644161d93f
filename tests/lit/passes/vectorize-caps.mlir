// RUN: %cutec opt %s --pass cute-vectorize | FileCheck %s
// RUN: %cutec opt %s --pass cute-vectorize --pass cute-vectorize | FileCheck %s
// What cute-vectorize caps, recomputes and leaves alone; running it twice changes nothing.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @caps
    gpu.func @caps(%a: !cute.tensor<f16, "gmem", 16, "(1,8):(0,1)">, %s: !cute.tensor<f32, "gmem", 16, "8:2">,
                   %c: !cute.tensor<f32, "gmem", 16, "(4,4):(1,4)">) kernel {
      // A copy atom of 32 bits (max_vector = 2 f16) caps a width the layout would allow at 8.
      // CHECK: "cute.load_frag"(%{{.*}}) {max_vector = 2 : i32, vector = 2 : i32}
      %0 = "cute.load_frag"(%a) {max_vector = 2 : i32} : (!cute.tensor<f16, "gmem", 16, "(1,8):(0,1)">) -> vector<8xf16>
      // A cap wider than what is proven does not widen the access.
      // CHECK: "cute.load_frag"(%{{.*}}) {max_vector = 16 : i32, vector = 1 : i32}
      %1 = "cute.load_frag"(%s) {max_vector = 16 : i32} : (!cute.tensor<f32, "gmem", 16, "8:2">) -> vector<8xf32>
      // A width already on the op is not trusted: strided elements go back to one at a time.
      // CHECK: "cute.store_frag"(%{{.*}}, %{{.*}}) {vector = 1 : i32}
      "cute.store_frag"(%1, %s) {vector = 4 : i32} : (vector<8xf32>, !cute.tensor<f32, "gmem", 16, "8:2">) -> ()
      // Scalar loads and stores are not fragment accesses: left without a width.
      // CHECK: %[[X:[0-9]+]] = "cute.load"(%{{[^)]*}}) : (
      // CHECK-NOT: vector =
      // CHECK: "cute.store"(%[[X]], %{{[^)]*}}) : (f32, 
      %i = arith.constant 3 : i32
      %x = "cute.load"(%c, %i) : (!cute.tensor<f32, "gmem", 16, "(4,4):(1,4)">, i32) -> f32
      "cute.store"(%x, %c, %i) : (f32, !cute.tensor<f32, "gmem", 16, "(4,4):(1,4)">, i32) -> ()
      // CHECK: gpu.return
      gpu.return
    }
  }
}
