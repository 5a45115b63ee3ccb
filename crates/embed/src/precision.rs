//! Which arithmetic the encoder's linear layers (~94 % of its work) run in: 8-bit
//! integers where the CPU has AVX-512 VNNI (several times f32's throughput, vectors
//! within ~0.99+ cosine of f32's), else f32. `LOCI_EMBED_PRECISION` picks it for a
//! process (`f32` to rule the 8-bit path out); [`crate::Embedder::load_with_precision`]
//! for one embedder.

use crate::error::EmbedError;

/// The environment variable [`Precision::from_env`] reads.
pub const PRECISION_ENV: &str = "LOCI_EMBED_PRECISION";

/// The linear layers' arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// [`Precision::Int8`] when the CPU has it, else [`Precision::F32`] (the default).
    #[default]
    Auto,
    /// f32 throughout: the reference's arithmetic, within rounding.
    F32,
    /// Weights quantised per output channel at load, activations per row, `u8 × i8`
    /// products summed in `i32` (AVX-512 VNNI); refused on a CPU without it.
    Int8,
}

impl Precision {
    /// The value of [`PRECISION_ENV`]: `auto` (or unset / empty), `f32` or `int8`.
    pub fn from_env() -> Result<Precision, EmbedError> {
        match std::env::var(PRECISION_ENV) {
            Err(std::env::VarError::NotPresent) => Ok(Precision::Auto),
            Err(std::env::VarError::NotUnicode(v)) => Err(EmbedError::Precision {
                value: v.to_string_lossy().into_owned(),
                reason: "expected auto, f32 or int8".into(),
            }),
            Ok(v) => v.parse(),
        }
    }

    /// The precision to run: `self`, with [`Precision::Auto`] decided for this CPU, and
    /// [`Precision::Int8`] refused where the CPU lacks it.
    pub fn resolve(self) -> Result<Precision, EmbedError> {
        let int8 = crate::cpu::int8_kernel_supported();
        match self {
            Precision::Auto if int8 => Ok(Precision::Int8),
            Precision::Auto | Precision::F32 => Ok(Precision::F32),
            Precision::Int8 if int8 => Ok(Precision::Int8),
            Precision::Int8 => Err(EmbedError::Precision {
                value: "int8".into(),
                reason: "this CPU lacks AVX-512 VNNI (avx512f, avx512bw, avx512vnni)".into(),
            }),
        }
    }

    /// Its name, as [`PRECISION_ENV`] spells it.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Auto => "auto",
            Precision::F32 => "f32",
            Precision::Int8 => "int8",
        }
    }
}

impl std::str::FromStr for Precision {
    type Err = EmbedError;

    fn from_str(s: &str) -> Result<Precision, EmbedError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Precision::Auto),
            "f32" => Ok(Precision::F32),
            "int8" => Ok(Precision::Int8),
            _ => Err(EmbedError::Precision {
                value: s.to_string(),
                reason: "expected auto, f32 or int8".into(),
            }),
        }
    }
}
