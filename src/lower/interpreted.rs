//! The operations that interpreters run one by one (the pruned render's tape on the CPU and
//! on the GPU, the host-side interval arithmetic of Newton's method), generated from their
//! lowering so that no interpreter restates an interval rule: [`operations`] writes each as a
//! function in CUDA C or Rust ([`crate::scalar::emit`]). The CUDA is generated when the GPU
//! interpreter is compiled; the Rust is checked in (`generated.rs`, one module per precision)
//! and a test keeps it equal to what the lowering gives.

use crate::ir::{NodeId, Op};
use crate::scalar::emit::{self, Language};
use crate::scalar::Precision;

/// The operations host-side and tape interpreters run: each one's name and the graph
/// operation it is the lowering of (the tape's codes `NEG` to `MAX` in this order, then
/// `intersect`, which Newton's step runs and no tape holds, then `div` and `hull`, which the
/// tapes' derivatives compose: `search::tape::Tape::gradient_lanes`).
pub(crate) const OPERATIONS: [(&str, Op); 12] = {
    let (x, y) = (NodeId(0), NodeId(1));
    [
        ("neg", Op::Neg(x)),
        ("add", Op::Add(x, y)),
        ("sub", Op::Sub(x, y)),
        ("mul", Op::Mul(x, y)),
        ("sqr", Op::Sqr(x)),
        ("sqrt", Op::Sqrt(x)),
        ("abs", Op::Abs(x)),
        ("min", Op::Min(x, y)),
        ("max", Op::Max(x, y)),
        ("intersect", Op::Intersect(x, y)),
        ("div", Op::Div(x, y)),
        ("hull", Op::Hull(x, y)),
    ]
};

/// The operations' bodies in `language`, from their lowering in precision `p` (CUDA C names
/// them `op_neg`, ...; Rust `neg`, ..., for `generated::f64_ops` or `generated::f32_ops`: the
/// lowering differs by precision, e.g. a square's magnitudes).
pub(crate) fn operations(p: Precision, language: Language) -> String {
    let mut out = String::new();
    for (name, op) in OPERATIONS {
        let program = super::lower_op(op, p).expect("a unary or binary operation");
        let name = match language {
            Language::CudaC => format!("op_{name}"),
            Language::Rust => name.to_string(),
        };
        let text = emit::function(&program, &name, language)
            .expect("the tape's operations lower to instructions both languages have rows for");
        if language == Language::Rust {
            out.push_str(&format!("\n/// `{}`, lowered.\n", op.name()));
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The operation bodies of `generated.rs` are what the lowering gives ([`operations`]),
    /// in both precisions. `IVJIT_BLESS=1` writes the file again.
    #[test]
    fn the_operations_are_the_lowerings() {
        let header =
            "//! The interpreted operations (`interpreted::OPERATIONS`) in Rust, generated \
                      from their\n\
                      //! lowering (`lower_op`) by `interpreted::operations`: do not edit. The \
                      test\n\
                      //! `the_operations_are_the_lowerings` fails when this file is not what \
                      the lowering gives;\n\
                      //! `IVJIT_BLESS=1 cargo test --lib the_operations_are_the_lowerings` \
                      writes it again.\n\n\
                      use crate::round::Round;\nuse crate::scalar::emit::Ops;\n";
        let module = |name: &str, p| {
            let body = operations(p, Language::Rust);
            let body: String = body
                .lines()
                .map(|l| {
                    if l.is_empty() {
                        "\n".to_string()
                    } else {
                        format!("    {l}\n")
                    }
                })
                .collect();
            format!("\n/// The operations lowered in {p}.\npub(crate) mod {name} {{\n    use super::*;\n{body}}}\n")
        };
        let generated = format!(
            "{header}{}{}",
            module("f64_ops", Precision::F64),
            module("f32_ops", Precision::F32)
        );
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lower/generated.rs");
        if std::env::var_os("IVJIT_BLESS").is_some() {
            std::fs::write(&path, &generated).expect("write generated.rs");
        }
        let on_disk = std::fs::read_to_string(&path).expect("read generated.rs");
        assert!(
            on_disk == generated,
            "src/lower/generated.rs is not the lowering's operations: run \
             IVJIT_BLESS=1 cargo test --lib the_operations_are_the_lowerings"
        );
    }
}
