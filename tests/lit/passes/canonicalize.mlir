// RUN: %cutec opt %s --pass cute-canonicalize | FileCheck %s
// RUN: %cutec opt %s --pass cute-canonicalize -o %t.mlir
// RUN: %cutec opt %t.mlir --pass cute-canonicalize | FileCheck %s
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // A view of a view becomes one view, the offsets added; the inner view is erased.
    // CHECK-LABEL: gpu.func @view_of_view(
    // CHECK-SAME: %[[T:[a-z0-9]+]]: {{.*}}, %[[A:[a-z0-9]+]]: i32, %[[B:[a-z0-9]+]]: i32)
    // CHECK-NEXT: %[[O:.*]] = arith.addi %[[A]], %[[B]] : i32
    // CHECK-NEXT: %[[V:.*]] = "cute.view"(%[[T]], %[[O]]) : {{.*}} -> !cute.tensor<f32, "gmem", 4 : i64, "4:1">
    // CHECK: "cute.load"(%[[V]]
    gpu.func @view_of_view(%t: !cute.tensor<f32, "gmem", 4, "(8,8):(1,8)">, %a: i32, %b: i32) kernel {
      %v1 = "cute.view"(%t, %a) : (!cute.tensor<f32, "gmem", 4, "(8,8):(1,8)">, i32) -> !cute.tensor<f32, "gmem", 4, "8:1">
      %v2 = "cute.view"(%v1, %b) : (!cute.tensor<f32, "gmem", 4, "8:1">, i32) -> !cute.tensor<f32, "gmem", 4, "4:1">
      %c0 = arith.constant 0 : i32
      %x = "cute.load"(%v2, %c0) : (!cute.tensor<f32, "gmem", 4, "4:1">, i32) -> f32
      gpu.return
    }

    // cute.dyn of a view is the view's own operand.
    // CHECK-LABEL: gpu.func @dyn_of_view(
    // CHECK-SAME: %{{.*}}: {{.*}}, %[[O:[a-z0-9]+]]: i32, %[[S:[a-z0-9]+]]: i32)
    // CHECK-NOT: cute.dyn
    // CHECK: arith.muli %[[S]], %[[S]] : i32
    gpu.func @dyn_of_view(%t: !cute.tensor<f32, "gmem", 4, "(?,?):(?,1)">, %o: i32, %s: i32) kernel {
      %v = "cute.view"(%t, %o, %s) : (!cute.tensor<f32, "gmem", 4, "(?,?):(?,1)">, i32, i32) -> !cute.tensor<f32, "gmem", 4, "(4,8):(?,1)">
      %d = "cute.dyn"(%v) {index = 0 : i32} : (!cute.tensor<f32, "gmem", 4, "(4,8):(?,1)">) -> i32
      %m = arith.muli %d, %d : i32
      %x = "cute.load"(%v, %m) : (!cute.tensor<f32, "gmem", 4, "(4,8):(?,1)">, i32) -> f32
      gpu.return
    }

    // Size-1 modes are dropped and contiguous static modes merge: ((1,8)):((0,1)) is 8:1, and
    // (2,4):(1,2) is 8:1 too.
    // CHECK-LABEL: gpu.func @canonical_layouts(
    // CHECK: "cute.view"(%{{.*}}, %{{.*}}) : {{.*}} -> !cute.tensor<f16, "gmem", 16 : i64, "8:1">
    // CHECK: "cute.view"(%{{.*}}, %{{.*}}) : {{.*}} -> !cute.tensor<f16, "gmem", 16 : i64, "8:1">
    gpu.func @canonical_layouts(%t: !cute.tensor<f16, "gmem", 16, "(64,64):(64,1)">, %o: i32) kernel {
      %v1 = "cute.view"(%t, %o) : (!cute.tensor<f16, "gmem", 16, "(64,64):(64,1)">, i32) -> !cute.tensor<f16, "gmem", 16, "((1,8)):((0,1))">
      %f1 = "cute.load_frag"(%v1) : (!cute.tensor<f16, "gmem", 16, "((1,8)):((0,1))">) -> vector<8xf16>
      %v2 = "cute.view"(%t, %o) : (!cute.tensor<f16, "gmem", 16, "(64,64):(64,1)">, i32) -> !cute.tensor<f16, "gmem", 16, "(2,4):(1,2)">
      %f2 = "cute.load_frag"(%v2) : (!cute.tensor<f16, "gmem", 16, "(2,4):(1,2)">) -> vector<8xf16>
      gpu.return
    }

    // Run-time entries are left as they are: whether (4,?):(1,4) merges depends on the `?`, and a
    // size-1 mode's dynamic stride is dropped with its mode.
    // CHECK-LABEL: gpu.func @dynamic_entries(
    // CHECK-SAME: %{{.*}}: {{.*}}, %[[O:[a-z0-9]+]]: i32, %[[N:[a-z0-9]+]]: i32, %[[S:[a-z0-9]+]]: i32)
    // CHECK: "cute.view"(%{{.*}}, %[[O]], %[[N]]) : {{.*}} -> !cute.tensor<f32, "gmem", 4 : i64, "(4,?):(1,4)">
    gpu.func @dynamic_entries(%t: !cute.tensor<f32, "gmem", 4, "?:1">, %o: i32, %n: i32, %s: i32) kernel {
      %v = "cute.view"(%t, %o, %n, %s) : (!cute.tensor<f32, "gmem", 4, "?:1">, i32, i32, i32) -> !cute.tensor<f32, "gmem", 4, "(4,1,?):(1,?,4)">
      %c0 = arith.constant 0 : i32
      %x = "cute.load"(%v, %c0) : (!cute.tensor<f32, "gmem", 4, "(4,1,?):(1,?,4)">, i32) -> f32
      gpu.return
    }

    // Already canonical views, and ops of other dialects, are left alone.
    // CHECK-LABEL: gpu.func @untouched(
    // CHECK-NEXT: %[[V:.*]] = "cute.view"(%{{.*}}, %{{.*}}) : {{.*}} -> !cute.tensor<f32, "gmem", 4 : i64, "(4,8):(8,1)">
    // CHECK-NEXT: arith.constant
    gpu.func @untouched(%t: !cute.tensor<f32, "gmem", 4, "(8,8):(8,1)">, %o: i32) kernel {
      %v = "cute.view"(%t, %o) : (!cute.tensor<f32, "gmem", 4, "(8,8):(8,1)">, i32) -> !cute.tensor<f32, "gmem", 4, "(4,8):(8,1)">
      %c0 = arith.constant 0 : i32
      %x = "cute.load"(%v, %c0) : (!cute.tensor<f32, "gmem", 4, "(4,8):(8,1)">, i32) -> f32
      gpu.return
    }
  }
}
