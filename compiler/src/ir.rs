//! A thin, safe-to-call layer over the MLIR C API for rewriting IR inside our passes.
//!
//! melior's typed handles tie values to borrows of their blocks, which fights in-place rewriting
//! (insert before an op, replace uses, erase). Passes work on raw handles through this module; every
//! `unsafe` here relies on one invariant: the handles come from the live module the pass is running on.

use mlir_sys::*;
use std::ffi::{c_void, CString};

pub type Op = MlirOperation;
pub type Val = MlirValue;

fn sref(s: &str) -> MlirStringRef {
    MlirStringRef { data: s.as_ptr() as *const _, length: s.len() }
}

fn string_of(r: MlirStringRef) -> String {
    if r.data.is_null() {
        return String::new();
    }
    let bytes = unsafe { std::slice::from_raw_parts(r.data as *const u8, r.length) };
    String::from_utf8_lossy(bytes).into_owned()
}

unsafe extern "C" fn append_to_string(s: MlirStringRef, data: *mut c_void) {
    let out = unsafe { &mut *(data as *mut String) };
    out.push_str(&string_of(s));
}

pub fn op_name(op: Op) -> String {
    unsafe { string_of(mlirIdentifierStr(mlirOperationGetName(op))) }
}

pub fn type_to_string(t: MlirType) -> String {
    memo::type_text(t, || {
        let mut s = String::new();
        unsafe { mlirTypePrint(t, Some(append_to_string), &mut s as *mut String as *mut c_void) };
        s
    })
}

pub fn value_type(v: Val) -> MlirType {
    unsafe { mlirValueGetType(v) }
}

pub fn operand(op: Op, i: usize) -> Val {
    unsafe { mlirOperationGetOperand(op, i as isize) }
}

pub fn result_count(op: Op) -> usize {
    unsafe { mlirOperationGetNumResults(op) as usize }
}

pub fn operand_count(op: Op) -> usize {
    unsafe { mlirOperationGetNumOperands(op) as usize }
}

pub fn result(op: Op, i: usize) -> Val {
    unsafe { mlirOperationGetResult(op, i as isize) }
}

pub fn location(op: Op) -> MlirLocation {
    unsafe { mlirOperationGetLocation(op) }
}

pub fn context(op: Op) -> MlirContext {
    unsafe { mlirOperationGetContext(op) }
}

/// Reports an error at an op's location through the context's diagnostic handler.
pub fn emit_error(loc: MlirLocation, message: &str) {
    let c = CString::new(message.replace('\0', " ")).unwrap_or_default();
    unsafe { mlirEmitError(loc, c.as_ptr()) }
}

pub fn parse_type(ctx: MlirContext, text: &str) -> Option<MlirType> {
    memo::parsed_type(ctx, text, || {
        let t = unsafe { mlirTypeParseGet(ctx, sref(text)) };
        (!t.ptr.is_null()).then_some(t)
    })
}

pub fn parse_attr(ctx: MlirContext, text: &str) -> Option<MlirAttribute> {
    memo::parsed_attr(ctx, text, || {
        let a = unsafe { mlirAttributeParseGet(ctx, sref(text)) };
        (!a.ptr.is_null()).then_some(a)
    })
}

/// Memos for the text round trips our passes make (printing a type to read its layout, since the C
/// API cannot read a dynamic type's parameters; parsing the layout; parsing a type or attribute from
/// its text): the same few dozen types are printed and parsed thousands of times per kernel, and
/// without the memos that was most of `cute-verify`'s and `cute-canonicalize`'s time (the figures
/// are in docs/pipeline.md, "Memos for the text round trips of our passes"). Types and
/// attributes are uniqued and immortal in their context, so a handle stays valid as long as the
/// context does; the memos live for one pass run ([`memo::scope`], which our pass wrapper opens),
/// when the context certainly does, and are per thread, as the handles' users are. Outside a scope
/// nothing is remembered.
pub mod memo {
    use mlir_sys::{MlirAttribute, MlirContext, MlirType};
    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::hash::Hash;

    #[derive(Default)]
    struct Memos {
        type_text: HashMap<usize, String>,
        types: HashMap<(usize, String), Option<MlirType>>,
        attrs: HashMap<(usize, String), Option<MlirAttribute>>,
        layouts: HashMap<String, Result<cute_layout::Layout, String>>,
    }

    thread_local! {
        static MEMOS: RefCell<Option<Memos>> = const { RefCell::new(None) };
    }

    /// Runs `f` with the memos on; they are dropped when the outermost scope ends.
    pub fn scope<R>(f: impl FnOnce() -> R) -> R {
        struct Close(bool);
        impl Drop for Close {
            fn drop(&mut self) {
                if self.0 {
                    MEMOS.with(|m| *m.borrow_mut() = None);
                }
            }
        }
        let opened = MEMOS.with(|m| {
            let mut m = m.borrow_mut();
            let open = m.is_none();
            if open {
                *m = Some(Memos::default());
            }
            open
        });
        let _close = Close(opened);
        f()
    }

    /// `compute()`, or what it gave for `key` before in this scope.
    fn remembered<K: Hash + Eq, V: Clone>(
        table: fn(&mut Memos) -> &mut HashMap<K, V>,
        key: K,
        compute: impl FnOnce() -> V,
    ) -> V {
        if let Some(v) = MEMOS.with(|m| m.borrow_mut().as_mut().and_then(|m| table(m).get(&key).cloned())) {
            return v;
        }
        // Computed with the memos released: computing may look something else up.
        let v = compute();
        MEMOS.with(|m| {
            if let Some(m) = m.borrow_mut().as_mut() {
                table(m).insert(key, v.clone());
            }
        });
        v
    }

    pub(super) fn type_text(t: MlirType, print: impl FnOnce() -> String) -> String {
        remembered(|m| &mut m.type_text, t.ptr as usize, print)
    }

    pub(super) fn parsed_type(
        ctx: MlirContext,
        text: &str,
        parse: impl FnOnce() -> Option<MlirType>,
    ) -> Option<MlirType> {
        remembered(|m| &mut m.types, (ctx.ptr as usize, text.to_string()), parse)
    }

    pub(super) fn parsed_attr(
        ctx: MlirContext,
        text: &str,
        parse: impl FnOnce() -> Option<MlirAttribute>,
    ) -> Option<MlirAttribute> {
        remembered(|m| &mut m.attrs, (ctx.ptr as usize, text.to_string()), parse)
    }

    /// A layout parsed from the text in a type (the layout library's parse of CuTe notation).
    pub fn layout(
        text: &str,
        parse: impl FnOnce() -> Result<cute_layout::Layout, String>,
    ) -> Result<cute_layout::Layout, String> {
        remembered(|m| &mut m.layouts, text.to_string(), parse)
    }
}

/// All ops nested in `root` (not `root` itself), in pre-order.
pub fn nested_ops(root: Op) -> Vec<Op> {
    unsafe extern "C" fn collect(op: MlirOperation, data: *mut c_void) -> MlirWalkResult {
        let v = unsafe { &mut *(data as *mut Vec<Op>) };
        v.push(op);
        MlirWalkResult_MlirWalkResultAdvance
    }
    let mut ops = Vec::new();
    unsafe {
        mlirOperationWalk(root, Some(collect), &mut ops as *mut Vec<Op> as *mut c_void, MlirWalkOrder_MlirWalkPreOrder)
    };
    ops.retain(|o: &Op| o.ptr != root.ptr);
    ops
}

pub fn entry_block(func: Op) -> MlirBlock {
    unsafe { mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0)) }
}

pub fn block_args(block: MlirBlock) -> Vec<Val> {
    let n = unsafe { mlirBlockGetNumArguments(block) };
    (0..n).map(|i| unsafe { mlirBlockGetArgument(block, i) }).collect()
}

pub fn insert_block_arg(block: MlirBlock, pos: usize, ty: MlirType, loc: MlirLocation) -> Val {
    unsafe { mlirBlockInsertArgument(block, pos as isize, ty, loc) }
}

pub fn erase_block_arg(block: MlirBlock, pos: usize) {
    unsafe { mlirBlockEraseArgument(block, pos as u32) }
}

pub fn same_value(a: Val, b: Val) -> bool {
    unsafe { mlirValueEqual(a, b) }
}

pub fn set_attr(op: Op, name: &str, attr: MlirAttribute) {
    unsafe { mlirOperationSetAttributeByName(op, sref(name), attr) }
}

pub fn remove_attr(op: Op, name: &str) {
    unsafe {
        mlirOperationRemoveAttributeByName(op, sref(name));
    }
}

pub fn function_type_attr(ctx: MlirContext, inputs: &[MlirType]) -> MlirAttribute {
    unsafe { mlirTypeAttrGet(mlirFunctionTypeGet(ctx, inputs.len() as isize, inputs.as_ptr(), 0, std::ptr::null())) }
}

/// The `sym_name` of a symbol op.
pub fn symbol_name(op: Op) -> Option<String> {
    unsafe {
        let a = mlirOperationGetAttributeByName(op, sref("sym_name"));
        if a.ptr.is_null() || !mlirAttributeIsAString(a) {
            return None;
        }
        Some(string_of(mlirStringAttrGetValue(a)))
    }
}

/// Replaces every use of `op`'s results with `with` (the op itself stays until erased).
pub fn replace_uses(op: Op, with: &[Val]) {
    for (i, v) in with.iter().enumerate() {
        unsafe { mlirValueReplaceAllUsesOfWith(result(op, i), *v) };
    }
}

/// Erases an op whose results have no uses left.
pub fn erase(op: Op) {
    unsafe { mlirOperationDestroy(op) }
}

/// An integer attribute's value, if the op has one by that name.
pub fn int_attr(op: Op, name: &str) -> Option<i64> {
    unsafe {
        let a = mlirOperationGetAttributeByName(op, sref(name));
        if a.ptr.is_null() || !mlirAttributeIsAInteger(a) {
            return None;
        }
        Some(mlirIntegerAttrGetValueInt(a))
    }
}

/// A string attribute's value, if the op has one by that name.
pub fn string_attr(op: Op, name: &str) -> Option<String> {
    unsafe {
        let a = mlirOperationGetAttributeByName(op, sref(name));
        (!a.ptr.is_null() && mlirAttributeIsAString(a)).then(|| string_of(mlirStringAttrGetValue(a)))
    }
}

/// The strings of an array-of-strings attribute, if the op has one by that name.
pub fn string_array_attr(op: Op, name: &str) -> Option<Vec<String>> {
    unsafe {
        let a = mlirOperationGetAttributeByName(op, sref(name));
        if a.ptr.is_null() || !mlirAttributeIsAArray(a) {
            return None;
        }
        (0..mlirArrayAttrGetNumElements(a))
            .map(|i| {
                let e = mlirArrayAttrGetElement(a, i);
                mlirAttributeIsAString(e).then(|| string_of(mlirStringAttrGetValue(e)))
            })
            .collect()
    }
}

/// The op that defines a value, or `None` for a block argument.
pub fn defining_op(v: Val) -> Option<Op> {
    unsafe { mlirValueIsAOpResult(v).then(|| mlirOpResultGetOwner(v)) }
}

/// For a block argument: the op owning its block, and the argument's position.
pub fn block_arg_owner(v: Val) -> Option<(Op, usize)> {
    unsafe {
        if !mlirValueIsABlockArgument(v) {
            return None;
        }
        let block = mlirBlockArgumentGetOwner(v);
        Some((mlirBlockGetParentOperation(block), mlirBlockArgumentGetArgNumber(v) as usize))
    }
}

/// The op whose region holds `op`, or `None` at the top.
pub fn parent_op(op: Op) -> Option<Op> {
    let p = unsafe { mlirOperationGetParentOperation(op) };
    (!p.ptr.is_null()).then_some(p)
}

/// Whether `op` is `ancestor` or nested in one of its regions.
pub fn is_within(op: Op, ancestor: Op) -> bool {
    std::iter::successors(Some(op), |&o| parent_op(o)).any(|o| o.ptr == ancestor.ptr)
}

/// Moves `op` to just before `anchor` (in `anchor`'s block).
pub fn move_before(op: Op, anchor: Op) {
    unsafe { mlirOperationMoveBefore(op, anchor) }
}

/// Makes `v` the `i`-th operand of `op`.
pub fn set_operand(op: Op, i: usize, v: Val) {
    unsafe { mlirOperationSetOperand(op, i as isize, v) }
}

/// Whether `t` is an integer type (`i1`, `i32`, ...; not `index`).
pub fn is_integer(t: MlirType) -> bool {
    unsafe { mlirTypeIsAInteger(t) }
}

/// Whether `t` is `index`.
pub fn is_index(t: MlirType) -> bool {
    unsafe { mlirTypeIsAIndex(t) }
}

/// Whether a value has any use.
pub fn has_uses(v: Val) -> bool {
    unsafe { !mlirValueGetFirstUse(v).ptr.is_null() }
}

/// Creates ops immediately before an anchor op, at a given location.
pub struct Builder {
    pub ctx: MlirContext,
    block: MlirBlock,
    anchor: Op,
    pub loc: MlirLocation,
}

impl Builder {
    pub fn before(anchor: Op) -> Builder {
        Builder { ctx: context(anchor), block: unsafe { mlirOperationGetBlock(anchor) }, anchor, loc: location(anchor) }
    }

    /// Where a value becomes available: right after its defining op, or at the start of the block
    /// whose argument it is (every block ends in a terminator, so both have an op to insert before).
    pub fn after_definition(v: Val, loc: MlirLocation) -> Builder {
        unsafe {
            let anchor = match defining_op(v) {
                Some(op) => mlirOperationGetNextInBlock(op),
                None => mlirBlockGetFirstOperation(mlirBlockArgumentGetOwner(v)),
            };
            Builder { ctx: context(anchor), block: mlirOperationGetBlock(anchor), anchor, loc }
        }
    }

    /// Creates an op before the anchor; `attrs` are parsed from MLIR attribute syntax.
    pub fn create(&self, name: &str, operands: &[Val], results: &[MlirType], attrs: &[(&str, MlirAttribute)]) -> Op {
        unsafe {
            let mut state = mlirOperationStateGet(sref(name), self.loc);
            mlirOperationStateAddOperands(&mut state, operands.len() as isize, operands.as_ptr());
            mlirOperationStateAddResults(&mut state, results.len() as isize, results.as_ptr());
            let named: Vec<MlirNamedAttribute> =
                attrs.iter().map(|(n, a)| mlirNamedAttributeGet(mlirIdentifierGet(self.ctx, sref(n)), *a)).collect();
            mlirOperationStateAddAttributes(&mut state, named.len() as isize, named.as_ptr());
            let op = mlirOperationCreate(&mut state);
            mlirBlockInsertOwnedOperationBefore(self.block, self.anchor, op);
            op
        }
    }

    /// Creates an op with `regions` empty regions (e.g. a global without an initializer).
    pub fn create_with_regions(
        &self,
        name: &str,
        results: &[MlirType],
        attrs: &[(&str, MlirAttribute)],
        regions: usize,
    ) -> Op {
        unsafe {
            let mut state = mlirOperationStateGet(sref(name), self.loc);
            mlirOperationStateAddResults(&mut state, results.len() as isize, results.as_ptr());
            let named: Vec<MlirNamedAttribute> =
                attrs.iter().map(|(n, a)| mlirNamedAttributeGet(mlirIdentifierGet(self.ctx, sref(n)), *a)).collect();
            mlirOperationStateAddAttributes(&mut state, named.len() as isize, named.as_ptr());
            let rs: Vec<MlirRegion> = (0..regions).map(|_| mlirRegionCreate()).collect();
            mlirOperationStateAddOwnedRegions(&mut state, rs.len() as isize, rs.as_ptr());
            let op = mlirOperationCreate(&mut state);
            mlirBlockInsertOwnedOperationBefore(self.block, self.anchor, op);
            op
        }
    }

    /// The block ops are created in.
    pub fn block(&self) -> MlirBlock {
        self.block
    }

    /// A copy of `op` (attributes included) before the anchor, with new operands and result types.
    pub fn clone_with(&self, op: Op, operands: &[Val], results: &[MlirType]) -> Op {
        unsafe {
            let copy = mlirOperationClone(op);
            for (i, v) in operands.iter().enumerate() {
                mlirOperationSetOperand(copy, i as isize, *v);
            }
            for (i, t) in results.iter().enumerate() {
                mlirValueSetType(result(copy, i), *t);
            }
            mlirBlockInsertOwnedOperationBefore(self.block, self.anchor, copy);
            copy
        }
    }

    pub fn ty(&self, text: &str) -> MlirType {
        parse_type(self.ctx, text).unwrap_or_else(|| panic!("internal error: bad builtin type `{text}`"))
    }

    pub fn attr(&self, text: &str) -> MlirAttribute {
        parse_attr(self.ctx, text).unwrap_or_else(|| panic!("internal error: bad builtin attribute `{text}`"))
    }

    pub fn const_int(&self, value: i64, ty: &str) -> Val {
        let t = self.ty(ty);
        let a = self.attr(&format!("{value} : {ty}"));
        result(self.create("arith.constant", &[], &[t], &[("value", a)]), 0)
    }

    pub fn binary(&self, name: &str, a: Val, b: Val) -> Val {
        result(self.create(name, &[a, b], &[value_type(a)], &[]), 0)
    }

    pub fn cast(&self, name: &str, a: Val, to: &str) -> Val {
        let t = self.ty(to);
        result(self.create(name, &[a], &[t], &[]), 0)
    }
}

/// A 1-D vector type's length and element type.
pub fn vector_shape(t: MlirType) -> Option<(i64, MlirType)> {
    unsafe {
        if !mlirTypeIsAVector(t) || mlirShapedTypeGetRank(t) != 1 {
            return None;
        }
        Some((mlirShapedTypeGetDimSize(t, 0), mlirShapedTypeGetElementType(t)))
    }
}

/// `vector<n x elem>`.
pub fn vector_type(n: i64, elem: MlirType) -> MlirType {
    unsafe { mlirVectorTypeGet(1, &n, elem) }
}

/// The integers of an attribute that is an array of integers (`[4]`) or a dense i64 array
/// (`array<i64: 4>`), if the op has one by that name.
pub fn int_array_attr(op: Op, name: &str) -> Option<Vec<i64>> {
    unsafe {
        let a = mlirOperationGetAttributeByName(op, sref(name));
        if a.ptr.is_null() {
            return None;
        }
        if mlirAttributeIsADenseI64Array(a) {
            return Some((0..mlirDenseArrayGetNumElements(a)).map(|i| mlirDenseI64ArrayGetElement(a, i)).collect());
        }
        if !mlirAttributeIsAArray(a) {
            return None;
        }
        (0..mlirArrayAttrGetNumElements(a))
            .map(|i| {
                let e = mlirArrayAttrGetElement(a, i);
                mlirAttributeIsAInteger(e).then(|| mlirIntegerAttrGetValueInt(e))
            })
            .collect()
    }
}

/// The element of a constant op's `value` when it is a splat (`dense<0.0> : vector<128xf32>`).
pub fn splat_value(op: Op) -> Option<MlirAttribute> {
    unsafe {
        let a = mlirOperationGetAttributeByName(op, sref("value"));
        (!a.ptr.is_null() && mlirAttributeIsADenseElements(a) && mlirDenseElementsAttrIsSplat(a))
            .then(|| mlirDenseElementsAttrGetSplatValue(a))
    }
}

/// A splat dense attribute of type `ty` whose every element is `element`.
pub fn splat_attr(ty: MlirType, element: MlirAttribute) -> MlirAttribute {
    unsafe { mlirDenseElementsAttrSplatGet(ty, element) }
}
