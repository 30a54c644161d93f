//! Host functions generic over element types: one name, several instances, chosen per call.
//!
//! `host add<T: f16 | f32>(a: tensor<T, ...>, ...)` is compiled once per listed type; the manifest
//! has one `host` block per instance (`add<f16>`, `add<f32>`), each with an `instance add` line and a
//! `typearg T f16 a b c` line naming the parameters whose element type `T` is. A call of `add`
//! picks the instance whose type arguments the tensor arguments' dtypes match
//! ([`select_instance`], pure: no driver), and is then an ordinary call of that instance. A call whose
//! dtypes match no instance is refused with the instances there are; one that mixes element types
//! where the source says they agree is refused saying which arguments disagree.

use crate::checked::Arg;
use crate::error::{Result, RuntimeError};
use crate::manifest::Manifest;
use crate::plan::{HostPlan, HostSig};

/// The plans a host function name stands for: one for an ordinary host function (or an instance
/// asked for by its own name, `add<f16>`), every instance for a generic one.
#[derive(Clone, Debug)]
pub struct HostGroup {
    name: String,
    generic: bool,
    plans: Vec<HostPlan>,
}

impl HostGroup {
    /// The host function `name` of `m`: an exact name first, else the instances of the generic
    /// `name`. Errors: no such host function (the message lists the names there are), an unusable
    /// plan in any instance, or instances that do not agree on their type parameters.
    pub fn new(m: &Manifest, name: &str) -> Result<HostGroup> {
        if m.host(name).is_some() {
            return Ok(HostGroup { name: name.to_string(), generic: false, plans: vec![HostPlan::new(m, name)?] });
        }
        let sigs = m.host_instances(name);
        if sigs.is_empty() {
            return Err(RuntimeError::HostNotFound { name: name.to_string(), available: m.host_names() });
        }
        check_instances(&sigs)
            .map_err(|e| RuntimeError::InvalidImage(format!("generic host function `{name}`: {e}")))?;
        let plans = sigs.iter().map(|s| HostPlan::new(m, &s.name)).collect::<Result<Vec<_>>>()?;
        Ok(HostGroup { name: name.to_string(), generic: true, plans })
    }

    /// The name it was asked for.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether this is a generic host function (instances selected per call).
    pub fn is_generic(&self) -> bool {
        self.generic
    }

    /// The plans: one, or one per instance in manifest order.
    pub fn plans(&self) -> &[HostPlan] {
        &self.plans
    }

    /// The index of the plan a call with `args` uses: 0 for an ordinary host function.
    pub fn select(&self, args: &[Arg]) -> Result<usize> {
        if !self.generic {
            return Ok(0);
        }
        let sigs: Vec<&HostSig> = self.plans.iter().map(HostPlan::sig).collect();
        select_instance(&self.name, &sigs, args)
    }
}

/// Instances of one generic must have the same parameters up to element types and the same type
/// parameters in the same order, each naming the same parameters; two instances must not have the
/// same type arguments.
fn check_instances(sigs: &[&HostSig]) -> std::result::Result<(), String> {
    let first = sigs[0];
    for s in sigs {
        if s.type_args.is_empty() {
            return Err(format!("instance `{}` has no `typearg` line", s.name));
        }
        let same_shape = s.params.len() == first.params.len()
            && s.type_args.len() == first.type_args.len()
            && s.type_args.iter().zip(&first.type_args).all(|(a, b)| a.name == b.name && a.params == b.params);
        if !same_shape {
            return Err(format!("instances `{}` and `{}` do not have the same parameters", first.name, s.name));
        }
    }
    for (i, a) in sigs.iter().enumerate() {
        if let Some(b) =
            sigs[..i].iter().find(|b| b.type_args.iter().zip(&a.type_args).all(|(x, y)| x.dtype == y.dtype))
        {
            return Err(format!("instances `{}` and `{}` have the same type arguments", b.name, a.name));
        }
    }
    Ok(())
}

/// `T = f16, U = f32`
fn type_args_text(s: &HostSig) -> String {
    s.type_args.iter().map(|t| format!("{} = {}", t.name, t.dtype)).collect::<Vec<_>>().join(", ")
}

/// The instance of generic host function `name` (`sigs`, its instances, each with the same type
/// parameters) that a call with `args` selects: the one whose every type argument is the dtype of
/// each tensor argument it types. When the arguments cannot select (a wrong count, or a scalar
/// where a typed tensor goes) the first instance is returned, whose own checks refuse the call with
/// the usual message. Never panics.
pub fn select_instance(name: &str, sigs: &[&HostSig], args: &[Arg]) -> Result<usize> {
    let Some(first) = sigs.first() else {
        return Err(RuntimeError::HostNotFound { name: name.to_string(), available: Vec::new() });
    };
    // The dtype of the argument for parameter `p`, when it is a tensor. (No allocation: this runs
    // on every call of a generic host function.)
    let dtype_at = |p: usize| match args.get(p) {
        Some(Arg::Tensor(v)) => Some(v.dtype),
        _ => None,
    };
    if args.len() != first.params.len()
        || first.type_args.iter().flat_map(|ta| &ta.params).any(|&p| dtype_at(p).is_none())
    {
        // Not something that selects: the instance's own check says what is wrong.
        return Ok(0);
    }
    let pname = |p: usize| first.params.get(p).map_or("?", |q| q.name.as_str());
    // Per type parameter, the dtype of its first tensor; the others must agree.
    let bound = |ta: &crate::plan::TypeArgSig| ta.params.first().and_then(|&p| dtype_at(p).map(|d| (p, d)));
    for ta in &first.type_args {
        let Some((p0, d0)) = bound(ta) else { continue };
        if let Some((p, d)) = ta.params.iter().filter_map(|&p| dtype_at(p).map(|d| (p, d))).find(|(_, d)| *d != d0) {
            return Err(RuntimeError::ArgumentMismatch(format!(
                "host `{name}`: mixed element types for `{}`: `{}` is {d0} but `{}` is {d} (both are declared `tensor<{}, ...>`)",
                ta.name,
                pname(p0),
                pname(p),
                ta.name
            )));
        }
    }
    let found = sigs.iter().position(|s| {
        s.type_args.len() == first.type_args.len()
            && s.type_args.iter().zip(&first.type_args).all(|(ta, fa)| bound(fa).is_none_or(|(_, d)| d == ta.dtype))
    });
    if let Some(i) = found {
        return Ok(i);
    }
    let given: Vec<String> = first
        .type_args
        .iter()
        .filter_map(|ta| bound(ta).map(|(p, d)| format!("{} = {d} (from `{}`)", ta.name, pname(p))))
        .collect();
    let have: Vec<String> = sigs.iter().map(|s| type_args_text(s)).collect();
    Err(RuntimeError::ArgumentMismatch(format!(
        "host `{name}` has no instance for {}; it was compiled for {} (`{name}<...>` in the source lists the types to compile for)",
        given.join(", "),
        have.join("; ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checked::TensorView;
    use crate::manifest::DType;
    use cute_abi::manifest::seal;

    /// Two instances of `host copy<T: f16 | f32>(a: tensor<T, ...>, b: tensor<T, ...>, n: i32)`.
    fn generic_text() -> String {
        let mut out = String::from("cutec-manifest 1\narch sm_90\n");
        let param = |n: &str, t: &str, a: u32| {
            format!("param {n} tensor elem={t} space=gmem align={a} rank=1 shape=? stride=1\n")
        };
        for (k, t, a) in [("k", "f16", 2), ("k_1", "f32", 4)] {
            out += &format!("kernel {k}\n{}{}end\n", param("a", t, a), param("b", t, a));
        }
        for (k, t, a) in [("k", "f16", 2), ("k_1", "f32", 4)] {
            out += &format!(
                "host copy<{t}>\n{}{}param n scalar elem=i32\ninstance copy\ntypearg T {t} a b\nlaunches {k}\nlaunch {k}\n\
                 grid (ceildiv $0 256) | 1 | 1\nblock 256 | 1 | 1\nsmem 0\narg tensor 0 | 0 | $0\narg tensor 1 | 0 | $1\nendlaunch\nend\n",
                param("a", t, a),
                param("b", t, a)
            );
        }
        out
    }

    fn t(d: DType) -> Arg {
        Arg::tensor(TensorView::contiguous_1d(0x1000, d, 512))
    }

    fn group() -> HostGroup {
        HostGroup::new(&Manifest::parse(&seal(&generic_text())).unwrap(), "copy").unwrap()
    }

    #[test]
    fn selects_by_dtype() {
        let g = group();
        assert!(g.is_generic());
        assert_eq!(g.plans().len(), 2);
        assert_eq!(g.select(&[t(DType::F16), t(DType::F16), Arg::i32(1)]).unwrap(), 0);
        assert_eq!(g.select(&[t(DType::F32), t(DType::F32), Arg::i32(1)]).unwrap(), 1);
        // The selected plan evaluates: the f32 instance launches k_1.
        let args = [t(DType::F32), t(DType::F32), Arg::i32(1)];
        let l = g.plans()[g.select(&args).unwrap()].evaluate(&args).unwrap();
        assert_eq!(l[0].kernel, "k_1");
    }

    #[test]
    fn refuses_an_uninstantiated_dtype() {
        let e = group().select(&[t(DType::BF16), t(DType::BF16), Arg::i32(1)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kernel argument mismatch: host `copy` has no instance for T = bf16 (from `a`); it was compiled for T = f16; T = f32 \
             (`copy<...>` in the source lists the types to compile for)"
        );
        assert!(matches!(e, RuntimeError::ArgumentMismatch(_)));
    }

    #[test]
    fn refuses_mixed_element_types() {
        let e = group().select(&[t(DType::F16), t(DType::F32), Arg::i32(1)]).unwrap_err();
        assert_eq!(e.to_string(), "kernel argument mismatch: host `copy`: mixed element types for `T`: `a` is f16 but `b` is f32 (both are declared `tensor<T, ...>`)");
    }

    #[test]
    fn leaves_other_mistakes_to_the_instance_check() {
        let g = group();
        // Too few arguments, or a scalar where a tensor goes: the first instance's check refuses.
        assert_eq!(g.select(&[t(DType::F32)]).unwrap(), 0);
        let args = [Arg::i32(3), t(DType::F32), Arg::i32(1)];
        assert_eq!(g.select(&args).unwrap(), 0);
        assert!(g.plans()[0].evaluate(&args).unwrap_err().to_string().contains("expects a tensor"));
    }

    #[test]
    fn exact_names_and_listing() {
        let m = Manifest::parse(&seal(&generic_text())).unwrap();
        assert_eq!(m.host_names(), vec!["copy".to_string()]);
        let one = HostGroup::new(&m, "copy<f32>").unwrap();
        assert!(!one.is_generic());
        assert_eq!(one.select(&[t(DType::F16)]).unwrap(), 0);
        let e = HostGroup::new(&m, "nope").unwrap_err();
        assert!(
            matches!(&e, RuntimeError::HostNotFound { available, .. } if available == &vec!["copy".to_string()]),
            "{e}"
        );
    }

    #[test]
    fn corrupt_instance_lines_never_panic_and_make_the_host_unusable() {
        let cases = [
            ("typearg T f32 a b", "typearg T f32 a zz"),
            ("typearg T f32 a b", "typearg T f64 a b"),
            ("typearg T f32 a b", "typearg T"),
            ("typearg T f32 a b", "typearg T f32 n"),
            ("typearg T f32 a b", "typearg T f32 a b\ntypearg T f32 a"),
            ("typearg T f32 a b", "typearg T nope a"),
            ("instance copy\ntypearg T f32 a b", "instance copy\ninstance copy\ntypearg T f32 a b"),
        ];
        for (from, to) in cases {
            let text = generic_text().replacen(from, to, 1);
            assert_ne!(text, generic_text());
            let m = Manifest::parse(&seal(&text)).unwrap();
            let e = HostGroup::new(&m, "copy").unwrap_err();
            assert!(matches!(e, RuntimeError::InvalidImage(_)), "{to}: {e}");
            // The other instance is still usable by its own name.
            assert!(HostGroup::new(&m, "copy<f16>").is_ok(), "{to}");
        }
        // Instances that disagree, or repeat a type argument.
        for (from, to) in [
            ("typearg T f32 a b", "typearg T f32 a"),
            ("typearg T f32 a b", "typearg U f32 a b"),
            ("instance copy\ntypearg T f32 a b", "instance copy"),
        ] {
            let m = Manifest::parse(&seal(&generic_text().replacen(from, to, 1))).unwrap();
            let e = HostGroup::new(&m, "copy").unwrap_err();
            assert!(e.to_string().contains("generic host function `copy`"), "{to}: {e}");
        }
        // Every prefix of the manifest parses or fails cleanly.
        let text = generic_text();
        for cut in 0..text.len() {
            if let Ok(m) = Manifest::parse(&seal(&text[..cut])) {
                if let Ok(g) = HostGroup::new(&m, "copy") {
                    let _ = g.select(&[t(DType::F32), t(DType::F32), Arg::i32(1)]);
                }
            }
        }
    }

    #[test]
    fn old_manifests_are_unchanged() {
        let m = Manifest::parse(&seal(
            &generic_text()
                .replace("instance copy\n", "")
                .replace("typearg T f16 a b\n", "")
                .replace("typearg T f32 a b\n", ""),
        ))
        .unwrap();
        // Without the instance lines they are two ordinary host functions.
        assert_eq!(m.host_names(), vec!["copy<f16>".to_string(), "copy<f32>".to_string()]);
        assert!(HostGroup::new(&m, "copy").is_err());
        assert!(!HostGroup::new(&m, "copy<f16>").unwrap().is_generic());
    }
}
