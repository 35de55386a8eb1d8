//! FNV-1a 64, written once: a stable fingerprint of bytes (not for
//! security). Files' digests ([`crate::files::digest`], line by line in
//! [`crate::files::read`]), keys and names (`domain`, `synth`, `eval`'s
//! folder names, the cache) all hash with it. Below every room.

/// FNV-1a 64's offset basis: the hash of no bytes.
pub const FNV1A_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a 64's prime.
const FNV1A_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a 64 of `bytes`, continuing from `hash`.
pub fn fnv1a_extend(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(FNV1A_PRIME);
    }
    hash
}

/// FNV-1a 64 of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_extend(FNV1A_OFFSET, bytes)
}

/// FNV-1a 64 of `bytes`, as 16 lowercase hex digits.
pub fn fnv1a_hex(bytes: &[u8]) -> String {
    format!("{:016x}", fnv1a(bytes))
}
