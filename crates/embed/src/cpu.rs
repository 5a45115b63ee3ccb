//! What this CPU can run: asked by the choice of precision and by the kernels alike,
//! below both.

/// Whether this CPU runs the encoder's 8-bit kernel (AVX-512 F + BW + VL + VNNI).
pub(crate) fn int8_kernel_supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512vnni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
