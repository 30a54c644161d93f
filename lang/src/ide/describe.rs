//! What an editor shows for a value elaboration computed: its type in the language's words and the
//! compile-time facts a CuTe programmer would otherwise `print` (layouts in CuTe notation, `?` for
//! run-time entries with their divisibility, the TV layouts of tiled copies and MMAs).

use crate::elab::Value;
use crate::kir::CopyOp;
use cute_layout::{Layout, MmaOperand};

/// A value as the editor describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueInfo {
    /// The value's type: `tensor<f16, gmem, (16,64):(?{div=8},1), align: 16>`, `layout`, `i32`, ...
    pub ty: String,
    /// What is known at compile time, one labelled line each.
    pub facts: Vec<Fact>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact {
    /// What the line is: `value`, `layout`, `TV layout`, `tile`, ...
    pub label: &'static str,
    pub text: String,
}

fn fact(label: &'static str, text: impl ToString) -> Fact {
    Fact { label, text: text.to_string() }
}

/// Size and cosize of a layout, where the algebra can compute them (`?` entries give `?`).
fn layout_facts(l: &Layout) -> Vec<Fact> {
    let mut facts = vec![fact("layout", l)];
    if let Ok(size) = l.size() {
        facts.push(fact("size", size));
    }
    if let Ok(cosize) = l.cosize() {
        facts.push(fact("cosize", cosize));
    }
    facts
}

fn copy_atom(elem: &str, bits: u32, op: CopyOp) -> String {
    match op {
        CopyOp::Universal => format!("Copy_Atom<UniversalCopy<{bits}b>, {elem}>"),
        op => format!("Copy_Atom<{}<{bits}b>, {elem}>", op.name()),
    }
}

/// The three TV layouts ((thread, value) -> coordinate in the A, B and C tiles) of an atom or tiled MMA.
fn mma_tv_facts(tv: impl Fn(MmaOperand) -> Option<Layout>) -> Vec<Fact> {
    let labels = [(MmaOperand::A, "TV layout A"), (MmaOperand::B, "TV layout B"), (MmaOperand::C, "TV layout C")];
    labels.into_iter().filter_map(|(op, label)| tv(op).map(|l| fact(label, l))).collect()
}

pub fn describe(v: &Value) -> ValueInfo {
    let (ty, facts): (String, Vec<Fact>) = match v {
        Value::Int(i) if i.is_static() => ("static integer".into(), vec![fact("value", i)]),
        // A run-time index is `?`; what is worth showing is a divisibility (`?{div=8}`).
        Value::Int(i) => {
            ("i32 (run time)".into(), if i.divisibility() > 1 { vec![fact("value", i)] } else { Vec::new() })
        }
        Value::Scalar(s, _) => (format!("{} (run time)", s.name()), Vec::new()),
        Value::Float(x) => ("float literal".into(), vec![fact("value", x)]),
        Value::Bool(b) => ("bool".into(), vec![fact("value", b)]),
        Value::Str(s) => ("string".into(), vec![fact("value", format!("{s:?}"))]),
        Value::SmemAllocator(a) => {
            ("shared-memory allocator".into(), vec![fact("next free byte of the launch's smem", a.next().to_string())])
        }
        Value::Tuple(_) => ("tuple".into(), vec![fact("value", v)]),
        Value::Pipeline(_) | Value::PipeState(_) | Value::Barrier(..) => (v.kind(), vec![fact("value", v)]),
        Value::Layout(l) => ("layout".into(), layout_facts(l)),
        Value::Swizzle(sw) => (
            "swizzle".into(),
            vec![
                fact("value", sw),
                fact("unmoved runs (elements)", 1i64 << sw.base),
                fact("period (elements)", sw.size()),
            ],
        ),
        Value::Composed(c) => {
            let mut facts = vec![fact("value", c), fact("swizzle", c.swizzle)];
            facts.extend(layout_facts(&c.layout));
            ("swizzled layout".into(), facts)
        }
        Value::Tensor(t) => {
            // The type names the element type, memory and alignment; CuTe prints the same as `ptr o layout`.
            let mut facts = layout_facts(&t.ty.layout);
            if let Some(sw) = t.ty.swizzle {
                facts.push(fact("swizzle", sw));
            }
            facts.push(fact("CuTe", v));
            (t.ty.to_string(), facts)
        }
        Value::Counting { layout, .. } => ("identity tensor".into(), vec![fact("layout", layout), fact("CuTe", v)]),
        Value::Frag(f, _) => (
            format!("fragment<{}, {}>", f.elem.name(), f.shape),
            vec![fact("shape", &f.shape), fact("elements per thread", f.len()), fact("element type", f.elem.name())],
        ),
        Value::Dim3(name) => ("dim3".into(), vec![fact("value", name)]),
        Value::Type(s) => ("type".into(), vec![fact("value", s.name())]),
        Value::Func(name) => ("function".into(), vec![fact("value", name)]),
        Value::CopyAtom { elem, bits, op } => {
            ("copy atom".into(), vec![fact("atom", copy_atom(elem.name(), *bits, *op))])
        }
        Value::TiledCopy { elem, bits, op, tv, tile } => (
            "tiled copy".into(),
            vec![fact("TV layout", tv), fact("tile", tile), fact("atom", copy_atom(elem.name(), *bits, *op))],
        ),
        Value::ThrCopy { elem, bits, op, tv, tile, tid } => (
            "thread slice of a tiled copy".into(),
            vec![
                fact("thread", tid),
                fact("TV layout", tv),
                fact("tile", tile),
                fact("atom", copy_atom(elem.name(), *bits, *op)),
            ],
        ),
        Value::MmaAtom(atom) => {
            let [m, n, k] = atom.shape_mnk;
            let mut facts = vec![
                fact("atom", atom.name),
                fact("instruction", atom.ptx),
                fact("shape (M,N,K)", format!("({m},{n},{k})")),
            ];
            facts.extend(mma_tv_facts(|op| Some(atom.layout_tv(op))));
            ("MMA atom".into(), facts)
        }
        Value::TiledMma(t) => ("tiled MMA".into(), tiled_mma_facts(t)),
        Value::ThrMma(slice) => {
            let mut facts = vec![fact("thread", &slice.1)];
            facts.extend(tiled_mma_facts(&slice.0));
            ("thread slice of a tiled MMA".into(), facts)
        }
        Value::Var(_, s) => (format!("{} (`let mut`, run time)", s.name()), Vec::new()),
        Value::Under => ("`_`".into(), Vec::new()),
        Value::Unit => ("()".into(), Vec::new()),
        Value::Stream(_) => ("stream (a host parameter, run time)".into(), Vec::new()),
    };
    ValueInfo { ty, facts }
}

fn tiled_mma_facts(t: &cute_layout::TiledMma) -> Vec<Fact> {
    let [m, n, k] = t.tile;
    let [lm, ln, lk] = t.atom_layout;
    let mut facts = vec![
        fact("atom", t.atom.name),
        fact("atom layout", format!("({lm},{ln},{lk})")),
        fact("tile (M,N,K)", format!("({m},{n},{k})")),
        fact("threads", t.threads()),
    ];
    facts.extend(mma_tv_facts(|op| t.layout_tv(op).ok()));
    facts
}

#[cfg(test)]
mod tests {
    use super::*;
    use cute_layout::{Int, IntTuple};

    #[test]
    fn layouts_show_size_and_dynamic_entries_with_divisibility() {
        let l = Layout::new(
            IntTuple::Tuple(vec![IntTuple::Int(Int::S(16)), IntTuple::Int(Int::S(64))]),
            IntTuple::Tuple(vec![IntTuple::Int(Int::var(7, 8)), IntTuple::Int(Int::S(1))]),
        )
        .unwrap();
        let info = describe(&Value::Layout(l));
        assert_eq!(info.ty, "layout");
        assert_eq!(info.facts[0], fact("layout", "(16,64):(?{div=8},1)"));
        assert_eq!(info.facts[1], fact("size", "1024"));
    }

    #[test]
    fn run_time_integers_keep_their_divisibility() {
        let info = describe(&Value::Int(Int::var(3, 16)));
        assert_eq!(info.ty, "i32 (run time)");
        assert_eq!(info.facts, vec![fact("value", "?{div=16}")]);
    }
}
