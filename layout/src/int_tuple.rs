//! IntTuple: an integer, or a tuple of IntTuples. Shapes, strides and
//! coordinates are all IntTuples.

use crate::error::{Error, Result};
use crate::int::Int;
use std::fmt;

#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum IntTuple {
    Int(Int),
    Tuple(Vec<IntTuple>),
}

impl From<i64> for IntTuple {
    fn from(v: i64) -> Self {
        IntTuple::Int(Int::S(v))
    }
}
impl From<Int> for IntTuple {
    fn from(v: Int) -> Self {
        IntTuple::Int(v)
    }
}
impl From<Vec<IntTuple>> for IntTuple {
    fn from(v: Vec<IntTuple>) -> Self {
        IntTuple::Tuple(v)
    }
}

/// `tup![2, 3]`, `tup![4, tup![3, 6]]`: static IntTuples in tests and docs.
#[macro_export]
macro_rules! tup {
    ($($x:expr),* $(,)?) => { $crate::IntTuple::Tuple(vec![$($crate::IntTuple::from($x)),*]) };
}

impl IntTuple {
    pub fn is_tuple(&self) -> bool {
        matches!(self, IntTuple::Tuple(_))
    }

    pub fn as_int(&self) -> Option<&Int> {
        match self {
            IntTuple::Int(i) => Some(i),
            IntTuple::Tuple(_) => None,
        }
    }

    /// Number of top-level modes: 1 for an integer.
    pub fn rank(&self) -> usize {
        match self {
            IntTuple::Int(_) => 1,
            IntTuple::Tuple(v) => v.len(),
        }
    }

    /// Nesting depth: 0 for an integer.
    pub fn depth(&self) -> usize {
        match self {
            IntTuple::Int(_) => 0,
            IntTuple::Tuple(v) => 1 + v.iter().map(|x| x.depth()).max().unwrap_or(0),
        }
    }

    /// Top-level modes; an integer is its own single mode.
    pub fn modes(&self) -> Vec<IntTuple> {
        match self {
            IntTuple::Int(_) => vec![self.clone()],
            IntTuple::Tuple(v) => v.clone(),
        }
    }

    /// Mode `i`; an integer has only mode 0 (itself).
    pub fn mode(&self, i: usize) -> Option<&IntTuple> {
        match self {
            IntTuple::Int(_) if i == 0 => Some(self),
            IntTuple::Int(_) => None,
            IntTuple::Tuple(v) => v.get(i),
        }
    }

    /// The leaves, left to right.
    pub fn leaves(&self) -> Vec<Int> {
        let mut out = Vec::new();
        self.collect_leaves(&mut out);
        out
    }
    fn collect_leaves(&self, out: &mut Vec<Int>) {
        match self {
            IntTuple::Int(i) => out.push(i.clone()),
            IntTuple::Tuple(v) => v.iter().for_each(|x| x.collect_leaves(out)),
        }
    }

    /// Flattened to depth <= 1 (an integer stays an integer).
    pub fn flatten(&self) -> IntTuple {
        match self {
            IntTuple::Int(_) => self.clone(),
            IntTuple::Tuple(_) => IntTuple::Tuple(self.leaves().into_iter().map(IntTuple::Int).collect()),
        }
    }

    /// Product of all leaves.
    pub fn product(&self) -> Result<Int> {
        match self {
            IntTuple::Int(i) => Ok(i.clone()),
            IntTuple::Tuple(v) => v.iter().try_fold(Int::ONE, |acc, x| acc.mul(&x.product()?)),
        }
    }

    /// Product of each top-level mode: `((2,3),4)` -> `(6,4)`.
    pub fn product_each(&self) -> Result<IntTuple> {
        match self {
            IntTuple::Int(_) => Ok(self.clone()),
            IntTuple::Tuple(v) => {
                Ok(IntTuple::Tuple(v.iter().map(|x| x.product().map(IntTuple::Int)).collect::<Result<_>>()?))
            }
        }
    }

    /// Same tree structure.
    pub fn congruent(&self, o: &IntTuple) -> bool {
        match (self, o) {
            (IntTuple::Int(_), IntTuple::Int(_)) => true,
            (IntTuple::Tuple(a), IntTuple::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.congruent(y))
            }
            _ => false,
        }
    }

    /// Same structure with every leaf replaced by `v`.
    pub fn repeat_like(&self, v: &Int) -> IntTuple {
        match self {
            IntTuple::Int(_) => IntTuple::Int(v.clone()),
            IntTuple::Tuple(t) => IntTuple::Tuple(t.iter().map(|x| x.repeat_like(v)).collect()),
        }
    }

    /// Rebuilds this tree's structure from a flat list of leaves (consumed in order).
    pub fn unflatten_like(&self, leaves: &mut impl Iterator<Item = Int>) -> Result<IntTuple> {
        match self {
            IntTuple::Int(_) => {
                leaves.next().map(IntTuple::Int).ok_or_else(|| Error::new("unflatten", "too few leaves"))
            }
            IntTuple::Tuple(t) => {
                Ok(IntTuple::Tuple(t.iter().map(|x| x.unflatten_like(leaves)).collect::<Result<_>>()?))
            }
        }
    }

    /// Exclusive prefix product, congruent to `self` (compact column-major strides).
    pub fn prefix_product(&self, init: &Int) -> Result<(IntTuple, Int)> {
        match self {
            IntTuple::Int(i) => Ok((IntTuple::Int(init.clone()), init.mul(i)?)),
            IntTuple::Tuple(v) => {
                let mut acc = init.clone();
                let mut out = Vec::with_capacity(v.len());
                for x in v {
                    let (p, next) = x.prefix_product(&acc)?;
                    out.push(p);
                    acc = next;
                }
                Ok((IntTuple::Tuple(out), acc))
            }
        }
    }

    pub fn is_static(&self) -> bool {
        match self {
            IntTuple::Int(i) => i.is_static(),
            IntTuple::Tuple(v) => v.iter().all(|x| x.is_static()),
        }
    }

    /// Wraps an integer into a 1-tuple; leaves tuples alone.
    pub fn wrap(self) -> IntTuple {
        match self {
            IntTuple::Int(_) => IntTuple::Tuple(vec![self]),
            t => t,
        }
    }

    /// A 1-tuple becomes its element (CuTe's `unwrap` of a single mode).
    pub fn unwrap_single(self) -> IntTuple {
        match self {
            IntTuple::Tuple(mut v) if v.len() == 1 => v.pop().unwrap_or(IntTuple::Tuple(vec![])),
            t => t,
        }
    }
}

impl fmt::Display for IntTuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntTuple::Int(i) => write!(f, "{i}"),
            IntTuple::Tuple(v) => {
                write!(f, "(")?;
                for (k, x) in v.iter().enumerate() {
                    if k > 0 {
                        write!(f, ",")?;
                    }
                    write!(f, "{x}")?;
                }
                write!(f, ")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_depth_product() {
        let t = tup![42, tup![1, 3], 17];
        assert_eq!(t.rank(), 3);
        assert_eq!(t.depth(), 2);
        assert_eq!(t.product().unwrap(), Int::S(42 * 3 * 17));
        assert_eq!(t.to_string(), "(42,(1,3),17)");
        assert_eq!(t.flatten().to_string(), "(42,1,3,17)");
        assert_eq!(IntTuple::from(5).depth(), 0);
    }

    #[test]
    fn prefix_product_is_col_major() {
        let (p, total) = tup![4, tup![3, 6]].prefix_product(&Int::ONE).unwrap();
        assert_eq!(p.to_string(), "(1,(4,12))");
        assert_eq!(total, Int::S(72));
    }
}
