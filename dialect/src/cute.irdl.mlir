// The `cute` dialect, defined in IRDL and loaded when a context is created.
//
// Types carry the static part of a layout in CuTe's notation as a string parameter, e.g.
// !cute.tensor<f32, "gmem", 4, "(?):(1)">: element type, memory space, base alignment in bytes,
// layout. A `?` entry is dynamic: its value travels with the tensor at run time.
//
// Two levels of ops: CuTe's operations on tensors (slice, local_tile, local_partition, composition,
// the divides and products, partition_S/D of a tiled copy), which `cute-canonicalize` folds with the
// layout algebra into `cute.view`s; and the memory ops (view, load, store, fragments, alloc) that
// `cute-lower-to-gpu` lowers. The checks IRDL cannot express are `cute-verify`'s.
irdl.dialect @cute {
  // A layout value: its static part in the type, its `?` entries as the operands of the op that
  // makes it (`cute.make_layout`).
  irdl.type @layout {
    %layout = irdl.base "#builtin.string"
    irdl.parameters(layout: %layout)
  }

  // How one thread moves one chunk: element type and bits per copy (CuTe's Copy_Atom of a
  // UniversalCopy).
  irdl.type @copy_atom {
    %elem = irdl.any
    %bits = irdl.base "#builtin.integer"
    irdl.parameters(elem: %elem, bits: %bits)
  }

  // A tiled copy: a copy atom repeated over a tile by a TV layout ((thread, value) -> tile
  // coordinate), both static.
  irdl.type @tiled_copy {
    %elem = irdl.any
    %bits = irdl.base "#builtin.integer"
    %tile = irdl.base "#builtin.string"
    %tv = irdl.base "#builtin.string"
    irdl.parameters(elem: %elem, bits: %bits, tile: %tile, tv: %tv)
  }

  // A tensor-core instruction (CuTe's MMA_Atom), by CuTe's name for it, e.g.
  // "SM80_16x8x16_F32BF16BF16F32_TN": the name fixes its shape, element types and TV layouts.
  irdl.type @mma_atom {
    %name = irdl.base "#builtin.string"
    irdl.parameters(name: %name)
  }

  // A tiled MMA: an atom over a column-major grid of warps ("(2,2,1)") and a tile (M,N,K) that is a
  // multiple of atom shape x atom layout in each mode (CuTe's permutation, as sizes).
  irdl.type @tiled_mma {
    %atom = irdl.base "#builtin.string"
    %layout = irdl.base "#builtin.string"
    %tile = irdl.base "#builtin.string"
    irdl.parameters(atom: %atom, layout: %layout, tile: %tile)
  }

  irdl.type @tensor {
    %elem = irdl.any
    %space = irdl.is "gmem"
    %space_s = irdl.is "smem"
    %space_r = irdl.is "rmem"
    %spaces = irdl.any_of(%space, %space_s, %space_r)
    %align = irdl.base "#builtin.integer"
    %layout = irdl.base "#builtin.string"
    irdl.parameters(elem: %elem, space: %spaces, align: %align, layout: %layout)
  }

  // ---- CuTe's operations on tensors. Each is `NAME(layout of src, args...)` of the layout algebra
  // (docs/dialect.md): `args` holds the arguments in CuTe notation, a `?` in them being the next
  // operand of `ints` and "@" the next of `layouts` (IRDL binds one type per variadic group, so the
  // two kinds are two groups, sized by `operandSegmentSizes`). Index integers (`ints`, offsets,
  // coordinates, `cute.dyn` values) are `%ix`: `i32`, or `i64` in a kernel with 64-bit index math
  // (`cute.index_bits = 64`); one op's are all one type. The result is a tensor over the same
  // memory; `cute-verify` checks that its type is what the algebra gives, `cute-canonicalize` folds
  // the op into a `cute.view`. All but make_view also take a `!cute.layout` and make one (folded
  // into a `cute.make_layout`).

  irdl.operation @make_view {
    %src = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst = irdl.base @cute::@tensor
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @slice {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @local_tile {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @local_partition {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @composition {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @logical_divide {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @zipped_divide {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @tiled_divide {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @flat_divide {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @logical_product {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @zipped_product {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @tiled_product {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @flat_product {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @select {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @get {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @group_modes {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @coalesce {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @flatten {
    %src_tensor = irdl.base @cute::@tensor
    %src_layout = irdl.base @cute::@layout
    %src = irdl.any_of(%src_tensor, %src_layout)
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %arg_layout = irdl.base @cute::@layout
    %args = irdl.base "#builtin.array"
    %dst_tensor = irdl.base @cute::@tensor
    %dst_layout = irdl.base @cute::@layout
    %dst = irdl.any_of(%dst_tensor, %dst_layout)
    irdl.attributes { "args" = %args }
    irdl.operands(src: %src, layouts: variadic %arg_layout, ints: variadic %ix)
    irdl.results(view: %dst)
  }

  // A layout value; `dyn` gives its `?` entries (shape entries, then strides).
  irdl.operation @make_layout {
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %layout = irdl.base @cute::@layout
    irdl.operands(dyn: variadic %ix)
    irdl.results(layout: %layout)
  }

  irdl.operation @make_copy_atom {
    %atom = irdl.base @cute::@copy_atom
    irdl.operands()
    irdl.results(atom: %atom)
  }

  // A tiled copy from a copy atom and its TV layout (the tile is in the result type).
  irdl.operation @make_tiled_copy {
    %atom = irdl.base @cute::@copy_atom
    %tv = irdl.base @cute::@layout
    %copy = irdl.base @cute::@tiled_copy
    irdl.operands(atom: %atom, tv: %tv)
    irdl.results(copy: %copy)
  }

  // The values thread `tid` of a tiled copy reads (partition_S) or writes (partition_D) in `src`:
  // (V, RestM, RestN, ...). (IRDL op names are lower case: CuTe's partition_S is partition_s.)
  irdl.operation @partition_s {
    %src = irdl.base @cute::@tensor
    %copy = irdl.base @cute::@tiled_copy
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %dst = irdl.base @cute::@tensor
    irdl.operands(src: %src, copy: %copy, tid: %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @partition_d {
    %src = irdl.base @cute::@tensor
    %copy = irdl.base @cute::@tiled_copy
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %dst = irdl.base @cute::@tensor
    irdl.operands(src: %src, copy: %copy, tid: %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @make_mma_atom {
    %atom = irdl.base @cute::@mma_atom
    irdl.operands()
    irdl.results(atom: %atom)
  }

  // A tiled MMA from its atom (the layout and tile are in the result type).
  irdl.operation @make_tiled_mma {
    %atom = irdl.base @cute::@mma_atom
    %mma = irdl.base @cute::@tiled_mma
    irdl.operands(atom: %atom)
    irdl.results(mma: %mma)
  }

  // The part of `src` thread `tid` of a tiled MMA holds of operand A (src is (M,K)), B ((N,K)) or
  // C ((M,N)): (FrgV, RestM, RestK) for A, as CuTe's thr_mma.partition_A.
  irdl.operation @partition_a {
    %src = irdl.base @cute::@tensor
    %mma = irdl.base @cute::@tiled_mma
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %dst = irdl.base @cute::@tensor
    irdl.operands(src: %src, mma: %mma, tid: %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @partition_b {
    %src = irdl.base @cute::@tensor
    %mma = irdl.base @cute::@tiled_mma
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %dst = irdl.base @cute::@tensor
    irdl.operands(src: %src, mma: %mma, tid: %ix)
    irdl.results(view: %dst)
  }

  irdl.operation @partition_c {
    %src = irdl.base @cute::@tensor
    %mma = irdl.base @cute::@tiled_mma
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %dst = irdl.base @cute::@tensor
    irdl.operands(src: %src, mma: %mma, tid: %ix)
    irdl.results(view: %dst)
  }

  // One warp-wide tensor-core instruction on register fragments: d = a * b + c, each vector the
  // thread's values of one atom in its TV-layout order (one constraint variable per operand: IRDL
  // binds a variable to one type) (`cute-verify` checks sizes and element
  // types against the atom; `cute-lower-mma` lowers it).
  irdl.operation @mma {
    %atom = irdl.base "#builtin.string"
    %a = irdl.base "!builtin.vector"
    %b = irdl.base "!builtin.vector"
    %c = irdl.base "!builtin.vector"
    %d = irdl.base "!builtin.vector"
    irdl.attributes { "atom" = %atom }
    irdl.operands(a: %a, b: %b, c: %c)
    irdl.results(d: %d)
  }

  // One warpgroup-wide, asynchronous tensor-core instruction (sm_90a `wgmma.mma_async`, CuTe's SS
  // atoms): d = a * b + c with `a` and `b` one atom's tiles in shared memory, (64, 16) and (N, 16),
  // read through matrix descriptors, and `c`/`d` the thread's accumulator values in the atom's C
  // TV order. With an RS atom (`SM90_64xNx16_..._RS`), `a` is instead the thread's A fragment, a
  // vector of 8 16-bit values (CuTe's ALayout_64x16 order), which must be written before the
  // `cute.warpgroup_fence` and left unchanged until the `cute.warpgroup_wait_group` covering d. `cute-verify` checks that both tiles are canonical K-major GMMA layouts (a swizzle of
  // 32, 64 or 128-byte rows, or none); `cute-lower-to-gpu` makes the descriptors from the tensors'
  // addresses and layouts and emits the instruction. `d` is valid only after a
  // `cute.warpgroup_wait_group` that covers it. With `scale_d` false, d = a * b (PTX's scale-d 0:
  // c is not read).
  irdl.operation @wgmma {
    %atom = irdl.base "#builtin.string"
    %a_tensor = irdl.base @cute::@tensor
    %a_regs = irdl.base "!builtin.vector"
    %a = irdl.any_of(%a_tensor, %a_regs)
    %b = irdl.base @cute::@tensor
    %c = irdl.base "!builtin.vector"
    %d = irdl.base "!builtin.vector"
    %scale_d = irdl.is i1
    irdl.attributes { "atom" = %atom }
    irdl.operands(a: %a, b: %b, c: %c, scale_d: optional %scale_d)
    irdl.results(d: %d)
  }

  // `wgmma.fence.sync.aligned`: the register (accumulator, RS A) and shared-memory accesses before
  // it are ordered before the wgmma instructions after it. Lowered with a register fence on every
  // accumulator and register A fragment of the function's wgmma ops, so their values are in place
  // before it.
  irdl.operation @warpgroup_fence {
    irdl.operands()
    irdl.results()
  }

  // `wgmma.wait_group.sync.aligned n`: waits until at most `n` committed wgmma groups are in flight.
  // Lowered with a register fence on every accumulator (and register A) after it, so no read of an
  // accumulator, nor a new write of an A fragment, moves above it.
  irdl.operation @warpgroup_wait_group {
    %n = irdl.base "#builtin.integer"
    irdl.attributes { "n" = %n }
    irdl.operands()
    irdl.results()
  }

  // ---- Memory.

  // The k-th dynamic entry of a tensor's layout (shape entries first, then strides, in flattened
  // order): the run-time value behind a `?` in its type.
  irdl.operation @dyn {
    %tensor = irdl.base @cute::@tensor
    %index = irdl.base "#builtin.integer"
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    irdl.attributes { "index" = %index }
    irdl.operands(tensor: %tensor)
    irdl.results(value: %ix)
  }

  // A view of a tensor's memory: the base moved by `offset` elements, with the layout of the result
  // type; `dyn` gives the values of the result layout's `?` entries in order.
  irdl.operation @view {
    %src = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %dst = irdl.base @cute::@tensor
    irdl.operands(src: %src, offset: %ix, dyn: variadic %ix)
    irdl.results(view: %dst)
  }

  // The memory of `src` as elements of the result's type (CuTe's `recast<T>(tensor)`): the same base,
  // the layout CuTe's `recast_layout` of the source's (from the source's element width to the
  // result's), its `?` entries the `dyn` operands in flattened order. `cute-verify` checks the
  // layout, that it covers exactly the source's memory, the alignment, and that neither side is
  // swizzled; the result is a new root for `cute-canonicalize` (views of it are views of it).
  irdl.operation @recast {
    %src = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %dst = irdl.base @cute::@tensor
    irdl.operands(src: %src, dyn: variadic %ix)
    irdl.results(view: %dst)
  }

  // New memory for a tensor of the result type: registers (rmem) or block-wide shared memory (smem).
  irdl.operation @alloc {
    %tensor = irdl.base @cute::@tensor
    irdl.operands()
    irdl.results(tensor: %tensor)
  }

  // A shared tensor `offset` bytes into the launch's own dynamic shared memory (its `smem(BYTES)`,
  // after what the compiler places there): CuTe DSL's `SmemAllocator.allocate_tensor`. The offset
  // is a multiple of 128; every launch must give at least `offset` + the tensor's bytes.
  irdl.operation @launch_smem {
    %tensor = irdl.base @cute::@tensor
    %offset = irdl.base "#builtin.integer"
    irdl.attributes { "offset" = %offset }
    irdl.operands()
    irdl.results(tensor: %tensor)
  }

  // CuTe's `tensor[coord]`: reads the element at a coordinate (no `_`) of the tensor's layout. The
  // `coord` attribute is in CuTe notation; its `?`s are the index-integer operands, in order.
  // `cute-canonicalize` maps the coordinate to an offset (a `cute.load`).
  irdl.operation @load_at {
    %tensor = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %elem = irdl.any
    %coord = irdl.base "#builtin.string"
    irdl.attributes { "coord" = %coord }
    irdl.operands(tensor: %tensor, coord: variadic %ix)
    irdl.results(value: %elem)
  }

  // CuTe's `tensor[coord] = value`.
  irdl.operation @store_at {
    %elem = irdl.any
    %tensor = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %coord = irdl.base "#builtin.string"
    irdl.attributes { "coord" = %coord }
    irdl.operands(value: %elem, tensor: %tensor, coord: variadic %ix)
    irdl.results()
  }

  // Reads the element `offset` elements from the tensor's base.
  irdl.operation @load {
    %tensor = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %elem = irdl.any
    irdl.operands(tensor: %tensor, offset: %ix)
    irdl.results(value: %elem)
  }

  // Writes the element `offset` elements from the tensor's base.
  irdl.operation @store {
    %elem = irdl.any
    %tensor = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    irdl.operands(value: %elem, tensor: %tensor, offset: %ix)
    irdl.results()
  }

  // Loads a whole static-size tensor into a register fragment (CuTe's TensorSSA `.load()`):
  // element i of the vector comes from the tensor's coordinate i.
  irdl.operation @load_frag {
    %tensor = irdl.base @cute::@tensor
    %vec = irdl.base "!builtin.vector"
    irdl.operands(tensor: %tensor)
    irdl.results(value: %vec)
  }

  // CuTe's copy: every element of `src` to the same coordinate of `dst` (tensors of one element type
  // and one static size, any memory spaces). `cute-vectorize` records the width (`vector = N`) both
  // layouts prove, capped by a copy atom's `max_vector`. With a predicate (`cp.async` only, CuTe's
  // zero-filling copy_if): when it is false nothing is read and `dst` is filled with zeros.
  irdl.operation @copy {
    %src = irdl.base @cute::@tensor
    %dst = irdl.base @cute::@tensor
    %pred = irdl.is i1
    irdl.operands(src: %src, dst: %dst, pred: optional %pred)
    irdl.results()
  }

  // An mbarrier operation (CuTe DSL's `cute.arch.mbarrier_*`, sm_90) on the 64-bit barrier `offset`
  // elements into `tensor`, an `i64` shared-memory tensor (`cute-verify` checks it). `kind`:
  // "init" (args: the arrival count), "arrive" (none), "arrive_expect_tx" (the transaction bytes
  // the current phase also waits for), "wait" (the phase parity: returns once that phase has
  // completed), "try_wait" (the phase parity; its one result: whether that phase has completed) or
  // "arrive_cluster" (the rank of the block in the cluster whose barrier at this offset it arrives on).
  irdl.operation @mbarrier {
    %tensor = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %i1 = irdl.is i1
    %kind = irdl.base "#builtin.string"
    irdl.attributes { "kind" = %kind }
    irdl.operands(tensor: %tensor, offset: %i32, args: variadic %i32)
    irdl.results(done: optional %i1)
  }

  // A TMA load (sm_90): the box of the tensor map `tmap` (a `byval` kernel parameter) at element
  // coordinates `coords` (innermost first) into the shared tensor `dst`, completing on the barrier
  // `offset` elements into `bar` (an `i64` shared tensor).
  irdl.operation @tma_load {
    %tensor = irdl.base @cute::@tensor
    %bar = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %ptr = irdl.base "!llvm.ptr"
    irdl.operands(dst: %tensor, bar: %bar, offset: %i32, tmap: %ptr, coords: variadic %i32)
    irdl.results()
  }

  // A TMA store (sm_90): the shared tensor `src` (the box of the tensor map `tmap`, a `byval`
  // kernel parameter) to element coordinates `coords` (innermost first) of the map's global
  // tensor; asynchronous, in the issuing thread's next bulk group (`nvvm.cp.async.bulk.*`).
  // Out-of-bounds parts of the box are not written.
  irdl.operation @tma_store {
    %tensor = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %ptr = irdl.base "!llvm.ptr"
    irdl.operands(src: %tensor, tmap: %ptr, coords: variadic %i32)
    irdl.results()
  }

  // Stores a register fragment into a whole static-size tensor.
  irdl.operation @store_frag {
    %vec = irdl.base "!builtin.vector"
    %tensor = irdl.base @cute::@tensor
    irdl.operands(value: %vec, tensor: %tensor)
    irdl.results()
  }

  // Distributed shared memory (sm_90 thread-block clusters): the element `offset` elements into the
  // shared tensor `tensor` in the shared memory of the block of rank `rank` in this block's
  // cluster (`mapa.shared::cluster`), read with `ld.shared::cluster`. `cute-verify` checks the
  // tensor is shared and the result its element type.
  irdl.operation @dsmem_load {
    %tensor = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %elem = irdl.any
    irdl.operands(tensor: %tensor, offset: %i32, rank: %i32)
    irdl.results(value: %elem)
  }

  // ... and written with `st.shared::cluster`.
  irdl.operation @dsmem_store {
    %tensor = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %elem = irdl.any
    irdl.operands(tensor: %tensor, offset: %i32, rank: %i32, value: %elem)
    irdl.results()
  }

  // An atomic read-modify-write of the element `offset` elements into `tensor` (global or shared):
  // `kind` is PTX's operation (add, min, max, exch, cas, and, or, xor), `type` its type suffix
  // (`u32`, `s64`, `b32`, `f32`, `noftz.f16`, ...), `scope` and `order` its qualifiers. `args` is
  // the operand, or cas's expected value then the new one. With a result it gives the old value
  // (`atom`); without, it is PTX's `red` where `red` has the ordering.
  irdl.operation @atomic {
    %tensor = irdl.base @cute::@tensor
    %i32 = irdl.is i32
    %i64 = irdl.is i64
    %ix = irdl.any_of(%i32, %i64)
    %elem = irdl.any
    %kind = irdl.base "#builtin.string"
    %type = irdl.base "#builtin.string"
    %scope = irdl.base "#builtin.string"
    %order = irdl.base "#builtin.string"
    irdl.attributes { "kind" = %kind, "type" = %type, "scope" = %scope, "order" = %order }
    irdl.operands(tensor: %tensor, offset: %ix, args: variadic %elem)
    irdl.results(old: optional %elem)
  }

  // A fragment added element-wise into a global f32 tensor of the same static size, four
  // contiguous elements per `red.global.add.v4.f32` (sm_90).
  irdl.operation @atomic_add_frag {
    %value = irdl.any
    %tensor = irdl.base @cute::@tensor
    %scope = irdl.base "#builtin.string"
    %order = irdl.base "#builtin.string"
    irdl.attributes { "scope" = %scope, "order" = %order }
    irdl.operands(value: %value, tensor: %tensor)
    irdl.results()
  }
}
