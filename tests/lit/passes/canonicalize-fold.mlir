// RUN: %cutec opt %s --pass cute-canonicalize | FileCheck %s
// RUN: %cutec opt %s --pass cute-canonicalize -o %t.mlir
// RUN: %cutec opt %t.mlir --pass cute-canonicalize | FileCheck %s
// cute-canonicalize folds CuTe's tensor operations with the layout algebra: each becomes a
// `cute.view` of the tensor its chain started from, its offset and `?` entries computed by `arith`
// ops from the run-time values the chain used. No CuTe tensor op, layout or copy is left.
// CHECK-NOT: cute.local_tile
// CHECK-NOT: cute.slice
// CHECK-NOT: cute.composition
// CHECK-NOT: cute.zipped_divide
// CHECK-NOT: cute.partition_s
// CHECK-NOT: cute.local_partition
// CHECK-NOT: cute.make_layout
// CHECK-NOT: cute.load_at
// CHECK-NOT: cute.store_at
// CHECK-NOT: cute.make_tiled_copy
module attributes {gpu.container_module} {
  gpu.module @kernels {
    // Static all the way: local_tile (8,16) at (1,2) of (64,64):(64,1) is 1*8*64 + 2*16 = 544
    // elements in, row 3 of it 3*64 more: one view at 736, its layout 16:1.
    // CHECK-LABEL: gpu.func @static_chain(
    // CHECK-NEXT: %[[C:.*]] = arith.constant 736 : i32
    // CHECK-NEXT: %[[V:.*]] = "cute.view"(%arg0, %[[C]]) : {{.*}} -> !cute.tensor<f32, "gmem", 16 : i64, "16:1">
    // CHECK-NEXT: "cute.load_frag"(%[[V]])
    gpu.func @static_chain(%t: !cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">) kernel {
      %tile = "cute.local_tile"(%t) {args = ["(8,16)", "(1,2)"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">) -> !cute.tensor<f32, "gmem", 16, "(8,16):(64,1)">
      %row = "cute.slice"(%tile) {args = ["(3,_)"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.tensor<f32, "gmem", 16, "(8,16):(64,1)">) -> !cute.tensor<f32, "gmem", 16, "(16):(1)">
      %f = "cute.load_frag"(%row) : (!cute.tensor<f32, "gmem", 16, "(16):(1)">) -> vector<16xf32>
      gpu.return
    }

    // A run-time tile coordinate and a run-time row stride: the offset is block * 16 * stride
    // (the constant coordinate 0 folds away), and the view's `?` stride is the tensor's own.
    // CHECK-LABEL: gpu.func @dynamic_tile(
    // CHECK: %[[S:.*]] = "cute.dyn"(%arg0) {index = 2 : i32}
    // CHECK: %[[B:.*]] = arith.index_cast
    // CHECK: %[[M:.*]] = arith.muli %[[S]], %[[B]] : i32
    // CHECK: %[[O:.*]] = arith.muli %[[M]], %c16_i32 : i32
    // CHECK: "cute.view"(%arg0, %[[O]], %[[S]]) : {{.*}} -> !cute.tensor<f16, "gmem", 16 : i64, "(16,256):(?{div=8},1)">
    gpu.func @dynamic_tile(%t: !cute.tensor<f16, "gmem", 16, "(?,?{div=8}):(?{div=8},1)">) kernel {
      %b = gpu.block_id x
      %bi = arith.index_cast %b : index to i32
      %c0 = arith.constant 0 : i32
      %tile = "cute.local_tile"(%t, %bi, %c0) {args = ["(16,256)", "(?,?)"], operandSegmentSizes = array<i32: 1, 0, 2>} : (!cute.tensor<f16, "gmem", 16, "(?,?{div=8}):(?{div=8},1)">, i32, i32) -> !cute.tensor<f16, "gmem", 16, "(16,256):(?{div=8},1)">
      %x = "cute.load"(%tile, %c0) : (!cute.tensor<f16, "gmem", 16, "(16,256):(?{div=8},1)">, i32) -> f16
      gpu.return
    }

    // Composition with a TV layout, then one thread's values: the thread index is split by the
    // TV layout's thread mode (8,4) with unsigned division (a thread index is never negative).
    // CHECK-LABEL: gpu.func @tv_composition(
    // CHECK: %[[T:.*]] = arith.index_cast
    // CHECK-DAG: arith.remui %[[T]], %c8_i32
    // CHECK-DAG: arith.divui %[[T]], %c8_i32
    // CHECK: "cute.view"(%arg0, %{{.*}}) : {{.*}} -> !cute.tensor<f32, "gmem", 4 : i64, "4:32">
    gpu.func @tv_composition(%t: !cute.tensor<f32, "gmem", 16, "(4,32):(32,1)">) kernel {
      %tid = gpu.thread_id x
      %ti = arith.index_cast %tid : index to i32
      %tv = "cute.make_layout"() : () -> !cute.layout<"((8,4),4):((4,32),1)">
      %c = "cute.composition"(%t, %tv) {args = ["@"], operandSegmentSizes = array<i32: 1, 1, 0>} : (!cute.tensor<f32, "gmem", 16, "(4,32):(32,1)">, !cute.layout<"((8,4),4):((4,32),1)">) -> !cute.tensor<f32, "gmem", 16, "((8,4),4):((1,8),32)">
      %mine = "cute.slice"(%c, %ti) {args = ["(?,_)"], operandSegmentSizes = array<i32: 1, 0, 1>} : (!cute.tensor<f32, "gmem", 16, "((8,4),4):((1,8),32)">, i32) -> !cute.tensor<f32, "gmem", 4, "(4):(32)">
      %f = "cute.load_frag"(%mine) : (!cute.tensor<f32, "gmem", 4, "(4):(32)">) -> vector<4xf32>
      gpu.return
    }

    // A tiled copy's partition of a tile: the offset adds the tile's (block * 4096) and the
    // thread's (tid % 32 + tid / 32 * 1024); the atom, TV layout and tiled copy are erased.
    // CHECK-LABEL: gpu.func @tiled_copy(
    // CHECK-DAG: %[[B:.*]] = arith.muli %{{.*}}, %c4096_i32
    // CHECK-DAG: %[[R:.*]] = arith.remui %{{.*}}, %c32_i32
    // CHECK: %[[O:.*]] = arith.addi %{{.*}}, %[[B]] : i32
    // CHECK: "cute.view"(%arg0, %[[O]]) : {{.*}} -> !cute.tensor<f32, "gmem", 4 : i64, "32:32">
    gpu.func @tiled_copy(%t: !cute.tensor<f32, "gmem", 16, "(?,1024):(1024,1)">) kernel {
      %tid = gpu.thread_id x
      %ti = arith.index_cast %tid : index to i32
      %b = gpu.block_id x
      %bi = arith.index_cast %b : index to i32
      %c0 = arith.constant 0 : i32
      %tile = "cute.local_tile"(%t, %bi, %c0) {args = ["(4,1024)", "(?,?)"], operandSegmentSizes = array<i32: 1, 0, 2>} : (!cute.tensor<f32, "gmem", 16, "(?,1024):(1024,1)">, i32, i32) -> !cute.tensor<f32, "gmem", 16, "(4,1024):(1024,1)">
      %atom = "cute.make_copy_atom"() : () -> !cute.copy_atom<f32, 32>
      %tv = "cute.make_layout"() : () -> !cute.layout<"((32,4),1):((4,1),0)">
      %copy = "cute.make_tiled_copy"(%atom, %tv) : (!cute.copy_atom<f32, 32>, !cute.layout<"((32,4),1):((4,1),0)">) -> !cute.tiled_copy<f32, 32, "(4,32)", "((32,4),1):((4,1),0)">
      %p = "cute.partition_s"(%tile, %copy, %ti) : (!cute.tensor<f32, "gmem", 16, "(4,1024):(1024,1)">, !cute.tiled_copy<f32, 32, "(4,32)", "((32,4),1):((4,1),0)">, i32) -> !cute.tensor<f32, "gmem", 4, "(1,1,32):(0,0,32)">
      %f = "cute.load_frag"(%p) : (!cute.tensor<f32, "gmem", 4, "(1,1,32):(0,0,32)">) -> vector<32xf32>
      gpu.return
    }

    // zipped_divide of a run-time shape: the tile counts are ceil(M/16) and ceil(N/256) of the
    // tensor's extents, the tile stride 16 * (row stride); the view's layout is then flattened.
    // CHECK-LABEL: gpu.func @dynamic_divide(
    // CHECK-DAG: %[[M:.*]] = "cute.dyn"(%arg0) {index = 0 : i32}
    // CHECK-DAG: %[[N:.*]] = "cute.dyn"(%arg0) {index = 1 : i32}
    // CHECK-DAG: arith.ceildivui %[[M]], %c16_i32
    // CHECK-DAG: arith.ceildivui %[[N]], %c256_i32
    // CHECK: "cute.view"(%arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : {{.*}} -> !cute.tensor<f16, "gmem", 16 : i64, "(16,256,?,?):(?{div=8},1,?{div=128},256)">
    gpu.func @dynamic_divide(%t: !cute.tensor<f16, "gmem", 16, "(?,?{div=8}):(?{div=8},1)">) kernel {
      %z = "cute.zipped_divide"(%t) {args = ["(16,256)"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.tensor<f16, "gmem", 16, "(?,?{div=8}):(?{div=8},1)">) -> !cute.tensor<f16, "gmem", 16, "((16,256),(?,?)):((?{div=8},1),(?{div=128},256))">
      %c0 = arith.constant 0 : i32
      %x = "cute.load"(%z, %c0) : (!cute.tensor<f16, "gmem", 16, "((16,256),(?,?)):((?{div=8},1),(?{div=128},256))">, i32) -> f16
      gpu.return
    }

    // local_partition takes a layout and a run-time thread index (the two operand groups): thread
    // t of the (2,8):(8,1) thread layout owns a (4,2):(32,8) slice of the (8,16):(16,1) tile.
    // CHECK-LABEL: gpu.func @thread_partition(
    // CHECK: "cute.view"(%arg0, %{{.*}}) : {{.*}} -> !cute.tensor<f32, "gmem", 4 : i64, "(4,2):(32,8)">
    gpu.func @thread_partition(%t: !cute.tensor<f32, "gmem", 16, "(8,16):(16,1)">) kernel {
      %tid = gpu.thread_id x
      %ti = arith.index_cast %tid : index to i32
      %thr = "cute.make_layout"() : () -> !cute.layout<"(2,8):(8,1)">
      %p = "cute.local_partition"(%t, %thr, %ti) {args = ["@", "?"], operandSegmentSizes = array<i32: 1, 1, 1>} : (!cute.tensor<f32, "gmem", 16, "(8,16):(16,1)">, !cute.layout<"(2,8):(8,1)">, i32) -> !cute.tensor<f32, "gmem", 4, "(4,2):(32,8)">
      %f = "cute.load_frag"(%p) : (!cute.tensor<f32, "gmem", 4, "(4,2):(32,8)">) -> vector<8xf32>
      gpu.return
    }

    // The algebra ops also take layout values and fold to `cute.make_layout`, which make_view puts
    // on a tensor's memory: coalesce((4,?):(1,4)) is the single mode ?{div=4}:1 (extent 4 * n),
    // and a static divide then slice is the static layout ((2,4)):((8,1)), (2,4):(8,1) in canonical form.
    // CHECK-LABEL: gpu.func @layout_values(
    // CHECK: %[[N4:.*]] = arith.muli %arg1, %c4_i32 : i32
    // CHECK: "cute.view"(%arg0, %{{.*}}, %[[N4]]) : {{.*}} -> !cute.tensor<f32, "gmem", 16 : i64, "?{div=4}:1">
    // CHECK: "cute.view"(%arg0, %{{.*}}) : {{.*}} -> !cute.tensor<f32, "gmem", 16 : i64, "(2,4):(8,1)">
    gpu.func @layout_values(%t: !cute.tensor<f32, "gmem", 16, "(?,64):(64,1)">, %n: i32) kernel {
      %l = "cute.make_layout"(%n) : (i32) -> !cute.layout<"(4,?):(1,4)">
      %c = "cute.coalesce"(%l) {args = [], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.layout<"(4,?):(1,4)">) -> !cute.layout<"?{div=4}:1">
      %flat = "cute.make_view"(%t, %c) {args = ["@"], operandSegmentSizes = array<i32: 1, 1, 0>} : (!cute.tensor<f32, "gmem", 16, "(?,64):(64,1)">, !cute.layout<"?{div=4}:1">) -> !cute.tensor<f32, "gmem", 16, "?{div=4}:1">
      %c0 = arith.constant 0 : i32
      %x = "cute.load"(%flat, %c0) : (!cute.tensor<f32, "gmem", 16, "?{div=4}:1">, i32) -> f32
      %s = "cute.make_layout"() : () -> !cute.layout<"(8,8):(8,1)">
      %z = "cute.zipped_divide"(%s) {args = ["(2,4)"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.layout<"(8,8):(8,1)">) -> !cute.layout<"((2,4),(4,2)):((8,1),(16,4))">
      %r = "cute.slice"(%z) {args = ["(_,3)"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.layout<"((2,4),(4,2)):((8,1),(16,4))">) -> !cute.layout<"((2,4)):((8,1))">
      %v = "cute.make_view"(%t, %r) {args = ["@"], operandSegmentSizes = array<i32: 1, 1, 0>} : (!cute.tensor<f32, "gmem", 16, "(?,64):(64,1)">, !cute.layout<"((2,4)):((8,1))">) -> !cute.tensor<f32, "gmem", 16, "((2,4)):((8,1))">
      %f = "cute.load_frag"(%v) : (!cute.tensor<f32, "gmem", 16, "((2,4)):((8,1))">) -> vector<8xf32>
      gpu.return
    }

    // Element access by coordinate (CuTe's `tensor[coord]`) through a tile: one `cute.load` of the
    // original tensor at the tile's offset (3*8*64 = 1536) plus the coordinate's (5 + i*64).
    // CHECK-LABEL: gpu.func @element_in_tile(
    // CHECK: %[[R:.*]] = arith.muli %arg1, %c64_i32 : i32
    // CHECK: %[[S:.*]] = arith.addi %c5_i32, %[[R]] : i32
    // CHECK: %[[A:.*]] = arith.addi %c1536_i32, %[[S]] : i32
    // CHECK: "cute.load"(%arg0, %[[A]]) : (!cute.tensor<f32, "gmem", 16 : i64, "(64,64):(64,1)">, i32) -> f32
    // CHECK: "cute.store"(%{{.*}}, %arg0, %{{.*}}) : (f32, !cute.tensor<f32, "gmem", 16 : i64, "(64,64):(64,1)">, i32) -> ()
    gpu.func @element_in_tile(%t: !cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">, %i: i32) kernel {
      %tile = "cute.local_tile"(%t) {args = ["(8,16)", "(3,0)"], operandSegmentSizes = array<i32: 1, 0, 0>} : (!cute.tensor<f32, "gmem", 16, "(64,64):(64,1)">) -> !cute.tensor<f32, "gmem", 16, "(8,16):(64,1)">
      %x = "cute.load_at"(%tile, %i) {coord = "(?,5)"} : (!cute.tensor<f32, "gmem", 16, "(8,16):(64,1)">, i32) -> f32
      "cute.store_at"(%x, %tile, %i) {coord = "(?,5)"} : (f32, !cute.tensor<f32, "gmem", 16, "(8,16):(64,1)">, i32) -> ()
      gpu.return
    }

    // Left alone: memory ops on tensors that no CuTe op made keep their operands, and a kernel
    // without CuTe tensor ops is unchanged.
    // CHECK-LABEL: gpu.func @nothing_to_fold(
    // CHECK-NEXT: %[[C:.*]] = arith.constant 3 : i32
    // CHECK-NEXT: "cute.load"(%arg0, %[[C]]) : (!cute.tensor<f32, "gmem", 4 : i64, "?:1">, i32) -> f32
    // CHECK-NEXT: gpu.return
    gpu.func @nothing_to_fold(%t: !cute.tensor<f32, "gmem", 4, "?:1">) kernel {
      %c3 = arith.constant 3 : i32
      %x = "cute.load"(%t, %c3) : (!cute.tensor<f32, "gmem", 4, "?:1">, i32) -> f32
      gpu.return
    }
  }
}
