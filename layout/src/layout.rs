//! Layout: a shape and a congruent stride, a function from coordinates to
//! indices. This module holds construction, access by mode, and the
//! coordinate <-> index maps; the algebra lives in `ops/`.

use crate::error::{Error, Result};
use crate::int::Int;
use crate::int_tuple::IntTuple;
use std::fmt;

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Layout {
    pub shape: IntTuple,
    pub stride: IntTuple,
}

impl Layout {
    /// A layout from a shape and a congruent stride.
    pub fn new(shape: IntTuple, stride: IntTuple) -> Result<Layout> {
        check_shape("make_layout", &shape)?;
        if !shape.congruent(&stride) {
            return Err(Error::new("make_layout", format!("shape {shape} and stride {stride} are not congruent")));
        }
        Ok(Layout { shape, stride })
    }

    /// `s:d` for integers.
    pub fn leaf(s: impl Into<Int>, d: impl Into<Int>) -> Layout {
        Layout { shape: IntTuple::Int(s.into()), stride: IntTuple::Int(d.into()) }
    }

    /// The compact column-major layout of a shape (CuTe's default, LayoutLeft).
    pub fn col_major(shape: IntTuple) -> Result<Layout> {
        check_shape("make_layout", &shape)?;
        let (stride, _) = shape.prefix_product(&Int::ONE)?;
        Ok(Layout { shape, stride })
    }

    /// The compact row-major layout of a shape (LayoutRight): the last leaf is
    /// contiguous.
    pub fn row_major(shape: IntTuple) -> Result<Layout> {
        check_shape("make_layout_right", &shape)?;
        let leaves = shape.leaves();
        let mut strides = vec![Int::ONE; leaves.len()];
        let mut acc = Int::ONE;
        for k in (0..leaves.len()).rev() {
            strides[k] = acc.clone();
            acc = acc.mul(&leaves[k])?;
        }
        let stride = shape.unflatten_like(&mut strides.into_iter())?;
        Ok(Layout { shape, stride })
    }

    /// CuTe's `make_ordered_layout(shape, order)`: compact strides assigned to
    /// the leaves in increasing `order` (ties in column-major order).
    pub fn ordered(shape: IntTuple, order: &IntTuple) -> Result<Layout> {
        let leaves = shape.leaves();
        let ord = order.leaves();
        if ord.len() != leaves.len() {
            return Err(Error::new(
                "make_ordered_layout",
                format!("order {order} is not congruent with shape {shape}"),
            ));
        }
        let mut keys = Vec::with_capacity(ord.len());
        for (k, o) in ord.iter().enumerate() {
            let o = o.as_static().ok_or_else(|| Error::at("make_ordered_layout", k, "the order must be static"))?;
            keys.push((o, k));
        }
        keys.sort();
        let mut strides = vec![Int::ONE; leaves.len()];
        let mut acc = Int::ONE;
        for (_, k) in keys {
            strides[k] = acc.clone();
            acc = acc.mul(&leaves[k])?;
        }
        let stride = shape.unflatten_like(&mut strides.into_iter())?;
        Ok(Layout { shape, stride })
    }

    /// CuTe's `make_identity_layout(shape)`: the strides are the basis
    /// elements of the shape's modes (`(4,8)` -> `(4,8):(1@0,1@1)`, nested
    /// `((2,3),4)` -> `((2,3),4):((1@0@0,1@1@0),1@1)`), so the layout maps a
    /// coordinate to itself as an arithmetic tuple. An integer shape `n`
    /// gives `n:1`.
    pub fn identity(shape: IntTuple) -> Result<Layout> {
        check_shape("make_identity_layout", &shape)?;
        fn basis_like(s: &IntTuple, path: &mut Vec<u32>) -> Result<IntTuple> {
            match s {
                IntTuple::Int(_) => Ok(IntTuple::Int(Int::basis(path, &Int::ONE)?)),
                IntTuple::Tuple(v) => {
                    let mut out = Vec::with_capacity(v.len());
                    for (i, x) in v.iter().enumerate() {
                        let i = u32::try_from(i).map_err(|_| Error::new("make_identity_layout", "too many modes"))?;
                        path.push(i);
                        out.push(basis_like(x, path)?);
                        path.pop();
                    }
                    Ok(IntTuple::Tuple(out))
                }
            }
        }
        let stride = basis_like(&shape, &mut Vec::new())?;
        Ok(Layout { shape, stride })
    }

    /// Has this layout basis-element strides (an identity layout, or one
    /// derived from it): its values are arithmetic tuples, not indices.
    pub fn has_basis_strides(&self) -> bool {
        self.stride.leaves().iter().any(Int::has_basis)
    }

    /// The basis paths of the strides, in order (empty for integer strides):
    /// the shape of the arithmetic tuples this layout produces.
    pub fn basis_paths(&self) -> Vec<Vec<u32>> {
        self.stride.leaves().iter().filter_map(|d| d.as_scaled_basis().map(|(_, p)| p.to_vec())).collect()
    }

    /// Evaluates at a coordinate; a layout with basis strides gives its
    /// arithmetic tuple (`(4,8):(1@0,1@1)` at 9 gives `(1,2)`), plus
    /// `origin` (the zero tuple when `None`).
    pub fn eval_coord(&self, crd: &IntTuple, origin: Option<&Int>) -> Result<IntTuple> {
        let mut v = self.eval(crd)?;
        if let Some(o) = origin {
            v = o.add(&v)?;
        }
        if !self.has_basis_strides() && !v.has_basis() {
            return Ok(IntTuple::Int(v));
        }
        v.to_arith_tuple(&self.basis_paths())
    }

    /// Concatenation: each layout becomes one mode of the result
    /// (`make_layout(3:1, 4:3)` = `(3,4):(1,3)`).
    pub fn concat(modes: Vec<Layout>) -> Layout {
        let (s, d): (Vec<_>, Vec<_>) = modes.into_iter().map(|l| (l.shape, l.stride)).unzip();
        Layout { shape: IntTuple::Tuple(s), stride: IntTuple::Tuple(d) }
    }

    pub fn size(&self) -> Result<Int> {
        self.shape.product()
    }

    /// Size of the codomain, CuTe's `L(size-1) + 1`.
    pub fn cosize(&self) -> Result<Int> {
        self.no_basis("cosize")?;
        let mut hi = Int::ZERO;
        for (s, d) in self.leaves() {
            let span = s.sub(&Int::ONE)?.mul(&d)?;
            hi = hi.add(&span)?;
        }
        hi.add(&Int::ONE)
    }

    pub fn rank(&self) -> usize {
        self.shape.rank()
    }

    pub fn depth(&self) -> usize {
        self.shape.depth()
    }

    /// The (shape, stride) leaves, left to right: what code generation needs
    /// to emit crd2idx/idx2crd as arithmetic.
    pub fn leaves(&self) -> Vec<(Int, Int)> {
        self.shape.leaves().into_iter().zip(self.stride.leaves()).collect()
    }

    /// The run-time (non-static) entries: every dynamic shape leaf in flattened order, then every
    /// dynamic stride leaf. This is the order in which a `?` layout prints its `?`s, and the order
    /// in which the kernel ABI and the `cute` ops pass their values.
    pub fn dynamic_leaves(&self) -> Vec<Int> {
        self.shape.leaves().into_iter().chain(self.stride.leaves()).filter(|i| !i.is_static()).collect()
    }

    /// Top-level modes; an integer layout is its own single mode.
    pub fn modes(&self) -> Vec<Layout> {
        self.shape
            .modes()
            .into_iter()
            .zip(self.stride.modes())
            .map(|(shape, stride)| Layout { shape, stride })
            .collect()
    }

    /// Mode `i` (CuTe's `layout<i>`).
    pub fn mode(&self, i: usize) -> Result<Layout> {
        match (self.shape.mode(i), self.stride.mode(i)) {
            (Some(s), Some(d)) => Ok(Layout { shape: s.clone(), stride: d.clone() }),
            _ => Err(Error::at("get", i, format!("index out of range for {self} of rank {}", self.rank()))),
        }
    }

    /// Nested mode selection (CuTe's `layout<i,j,...>`).
    pub fn get(&self, path: &[usize]) -> Result<Layout> {
        let mut cur = self.clone();
        for (k, &i) in path.iter().enumerate() {
            cur = cur.mode(i).map_err(|e| {
                Error::at("get", path[..=k].iter().map(|x| x.to_string()).collect::<Vec<_>>().join("."), e.reason)
            })?;
        }
        Ok(cur)
    }

    /// The modes at the given indices, in that order (CuTe's `select<I...>`).
    pub fn select(&self, idx: &[usize]) -> Result<Layout> {
        Ok(Layout::concat(
            idx.iter().map(|&i| self.mode(i).map_err(|e| Error { op: "select".into(), ..e })).collect::<Result<_>>()?,
        ))
    }

    /// Modes [b, e) (CuTe's `take<B,E>`).
    pub fn take(&self, b: usize, e: usize) -> Result<Layout> {
        if b >= e || e > self.rank() {
            return Err(Error::new("take", format!("range [{b},{e}) is empty or exceeds rank {}", self.rank())));
        }
        self.select(&(b..e).collect::<Vec<_>>())
    }

    /// Groups modes [b, e) into one mode (CuTe's `group<B,E>` / `group_modes`).
    pub fn group_modes(&self, b: usize, e: usize) -> Result<Layout> {
        if b >= e || e > self.rank() {
            return Err(Error::new("group_modes", format!("range [{b},{e}) is empty or exceeds rank {}", self.rank())));
        }
        let m = self.modes();
        let mut out: Vec<Layout> = m[..b].to_vec();
        out.push(Layout::concat(m[b..e].to_vec()));
        out.extend_from_slice(&m[e..]);
        Ok(Layout::concat(out))
    }

    pub fn flatten(&self) -> Layout {
        Layout { shape: self.shape.flatten(), stride: self.stride.flatten() }
    }

    /// Appends `x` as a new last mode.
    pub fn append(&self, x: &Layout) -> Layout {
        let mut m = self.modes();
        m.push(x.clone());
        Layout::concat(m)
    }

    /// Prepends `x` as a new first mode.
    pub fn prepend(&self, x: &Layout) -> Layout {
        let mut m = vec![x.clone()];
        m.extend(self.modes());
        Layout::concat(m)
    }

    /// Pads with `1:0` modes up to rank `r` (CuTe's `append<R>`); a layout of
    /// rank >= r is returned as it is.
    pub fn append_to_rank(&self, r: usize) -> Layout {
        if self.rank() >= r {
            return self.clone();
        }
        let mut m = self.modes();
        while m.len() < r {
            m.push(Layout::leaf(1, 0));
        }
        Layout::concat(m)
    }

    /// Evaluates at a coordinate: an integer (colexicographic) or a
    /// hierarchical coordinate congruent to (a prefix-nesting of) the shape.
    pub fn eval(&self, crd: &IntTuple) -> Result<Int> {
        crd2idx(crd, &self.shape, &self.stride)
    }

    /// Evaluates at an integer index (fast path for static layouts).
    pub fn call(&self, i: i64) -> Result<Int> {
        crd2idx(&IntTuple::from(i), &self.shape, &self.stride)
    }

    /// Static shape and strides; a basis stride `k@i` is static when `k` is.
    pub fn is_static(&self) -> bool {
        self.shape.is_static()
            && self
                .stride
                .leaves()
                .iter()
                .all(|d| d.is_static() || d.as_scaled_basis().is_some_and(|(k, _)| k.is_static()))
    }

    /// An error for operations that need integer strides (complement, the
    /// inverses, cosize, the rhs of a composition), naming the first mode
    /// (flattened) whose stride is a basis element.
    pub fn no_basis(&self, op: &str) -> Result<()> {
        match self.stride.leaves().iter().position(Int::has_basis) {
            None => Ok(()),
            Some(k) => Err(Error::at(
                op,
                format!("{k} of the flattened layout"),
                format!("the stride {} is a basis element; {op} needs integer strides (identity layouts map to coordinates, not indices)", self.stride.leaves()[k]),
            )),
        }
    }

    /// `self` with its strides replaced (same shape).
    pub fn with_stride(&self, stride: IntTuple) -> Result<Layout> {
        Layout::new(self.shape.clone(), stride)
    }
}

/// Basis elements are strides, never shapes.
fn check_shape(op: &str, shape: &IntTuple) -> Result<()> {
    match shape.leaves().iter().position(Int::has_basis) {
        None => Ok(()),
        Some(k) => Err(Error::at(
            op,
            format!("{k} of the flattened shape"),
            format!("{} is a basis element; shapes are integers", shape.leaves()[k]),
        )),
    }
}

/// CuTe's crd2idx: coordinate -> index within (shape, stride).
pub fn crd2idx(crd: &IntTuple, shape: &IntTuple, stride: &IntTuple) -> Result<Int> {
    match (crd, shape, stride) {
        (IntTuple::Tuple(c), IntTuple::Tuple(s), IntTuple::Tuple(d)) => {
            if c.len() != s.len() || s.len() != d.len() {
                return Err(Error::new(
                    "crd2idx",
                    format!("coordinate {crd} does not match the rank of shape {shape}"),
                ));
            }
            let mut acc = Int::ZERO;
            for (k, ((c, s), d)) in c.iter().zip(s).zip(d).enumerate() {
                acc = acc.add(&crd2idx(c, s, d).map_err(|e| e.in_mode("crd2idx", k))?)?;
            }
            Ok(acc)
        }
        (IntTuple::Tuple(_), IntTuple::Int(_), _) => {
            Err(Error::new("crd2idx", format!("coordinate {crd} is deeper than shape {shape}")))
        }
        (IntTuple::Int(c), IntTuple::Tuple(s), IntTuple::Tuple(d)) => {
            if s.len() != d.len() {
                return Err(Error::new("crd2idx", "shape and stride are not congruent"));
            }
            if s.is_empty() {
                return Ok(Int::ZERO);
            }
            let mut acc = Int::ZERO;
            let mut c = c.clone();
            let last = s.len() - 1;
            for k in 0..last {
                let p = s[k].product()?;
                let (q, r) = if c.is(0) { (Int::ZERO, Int::ZERO) } else { (c.floor_div(&p)?, c.modulo(&p)?) };
                acc = acc.add(&crd2idx(&IntTuple::Int(r), &s[k], &d[k])?)?;
                c = q;
            }
            acc.add(&crd2idx(&IntTuple::Int(c), &s[last], &d[last])?)
        }
        (IntTuple::Int(c), IntTuple::Int(_), IntTuple::Int(d)) => c.mul(d),
        _ => Err(Error::new("crd2idx", "shape and stride are not congruent")),
    }
}

/// CuTe's idx2crd(idx, shape): the colexicographic coordinate of an index,
/// congruent to the shape.
pub fn idx2crd(idx: &IntTuple, shape: &IntTuple) -> Result<IntTuple> {
    match (idx, shape) {
        (IntTuple::Tuple(i), IntTuple::Tuple(s)) => {
            if i.len() != s.len() {
                return Err(Error::new("idx2crd", format!("index {idx} does not match the rank of shape {shape}")));
            }
            Ok(IntTuple::Tuple(i.iter().zip(s).map(|(i, s)| idx2crd(i, s)).collect::<Result<_>>()?))
        }
        (IntTuple::Tuple(_), IntTuple::Int(_)) => {
            Err(Error::new("idx2crd", format!("index {idx} is deeper than shape {shape}")))
        }
        (IntTuple::Int(_), IntTuple::Tuple(_)) => {
            let (stride, _) = shape.prefix_product(&Int::ONE)?;
            idx2crd_strided(idx, shape, &stride)
        }
        (IntTuple::Int(_), IntTuple::Int(_)) => Ok(idx.clone()),
    }
}

/// idx2crd(idx, shape, stride): per leaf `(idx / d) % s` (valid for compact
/// layouts, as in CuTe).
pub fn idx2crd_strided(idx: &IntTuple, shape: &IntTuple, stride: &IntTuple) -> Result<IntTuple> {
    match (idx, shape, stride) {
        (IntTuple::Tuple(i), IntTuple::Tuple(s), IntTuple::Tuple(d)) if i.len() == s.len() && s.len() == d.len() => Ok(
            IntTuple::Tuple(i.iter().zip(s).zip(d).map(|((i, s), d)| idx2crd_strided(i, s, d)).collect::<Result<_>>()?),
        ),
        (IntTuple::Int(_), IntTuple::Tuple(s), IntTuple::Tuple(d)) if s.len() == d.len() => {
            Ok(IntTuple::Tuple(s.iter().zip(d).map(|(s, d)| idx2crd_strided(idx, s, d)).collect::<Result<_>>()?))
        }
        (IntTuple::Int(i), IntTuple::Int(s), IntTuple::Int(d)) => {
            if d.has_basis() {
                return Err(Error::new(
                    "idx2crd",
                    format!("the stride {d} is a basis element; idx2crd needs integer strides"),
                ));
            }
            if s.is(1) {
                return Ok(IntTuple::from(0));
            }
            if d.is(0) {
                return Err(Error::new("idx2crd", "a stride-0 mode of size > 1 has no inverse"));
            }
            Ok(IntTuple::Int(i.floor_div(d)?.modulo(s)?))
        }
        _ => Err(Error::new("idx2crd", format!("index {idx} does not match shape {shape} and stride {stride}"))),
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.shape, self.stride)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tup;

    #[test]
    fn col_and_row_major() {
        assert_eq!(Layout::col_major(tup![2, 3, 5, 7]).unwrap().to_string(), "(2,3,5,7):(1,2,6,30)");
        assert_eq!(Layout::row_major(tup![4, 8]).unwrap().to_string(), "(4,8):(8,1)");
        assert_eq!(Layout::ordered(tup![2, 3, 4], &tup![1, 2, 0]).unwrap().to_string(), "(2,3,4):(4,8,1)");
    }

    #[test]
    fn crd2idx_int_and_hier() {
        let l = Layout::new(tup![4, tup![3, 6]], tup![1, tup![4, 12]]).unwrap();
        assert_eq!(l.call(5).unwrap(), Int::S(5));
        assert_eq!(l.eval(&tup![1, tup![2, 1]]).unwrap(), Int::S(1 + 8 + 12));
        assert_eq!(l.eval(&tup![1, 5]).unwrap(), Int::S(1 + 8 + 12));
        assert!(l.eval(&tup![1, 2, 3]).is_err());
    }

    #[test]
    fn idx2crd_colex() {
        assert_eq!(idx2crd(&IntTuple::from(7), &tup![2, tup![2, 3]]).unwrap().to_string(), "(1,(1,1))");
    }

    #[test]
    fn sublayouts() {
        let a = Layout::col_major(tup![4, tup![3, 6]]).unwrap();
        assert_eq!(a.to_string(), "(4,(3,6)):(1,(4,12))");
        assert_eq!(a.get(&[0]).unwrap().to_string(), "4:1");
        assert_eq!(a.get(&[1]).unwrap().to_string(), "(3,6):(4,12)");
        assert_eq!(a.get(&[1, 0]).unwrap().to_string(), "3:4");
        assert_eq!(a.get(&[1, 1]).unwrap().to_string(), "6:12");
        assert!(a.get(&[2]).is_err());
    }
}
