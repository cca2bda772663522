//! Job keys: the identity of a call that survives crashes and machine borders.

use std::fmt;

/// blake3(function id ‖ 0 ‖ postcard(params)) (the id of a generic
/// function's instantiation: see `Job::instance_id` in `satin`): equal for
/// equal calls of the same function, whichever machine computes it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct JobKey(pub [u8; 32]);

impl JobKey {
    /// The key of a call of the function (or generic instantiation) named
    /// `function_id` whose parameters encode (postcard) as `params`.
    pub fn of_call(function_id: &str, params: &[u8]) -> JobKey {
        let mut hasher = blake3::Hasher::new();
        hasher.update(function_id.as_bytes());
        hasher.update(&[0]);
        hasher.update(params);
        crate::values::hashed(params.len());
        JobKey(*hasher.finalize().as_bytes())
    }
}

impl fmt::Debug for JobKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in &self.0[..8] {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// A `HashMap` hasher for [`JobKey`]s. Keys are blake3 outputs (or, in the
/// simulator, distinct indices in their first bytes), so folding the first
/// eight bytes is as good as hashing all 32, and much cheaper.
#[derive(Default, Clone, Copy)]
pub struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    // Inlined across the crate border: every map keyed by `JobKey` hashes
    // through these, in `satin-core` as well as here.
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut first = [0u8; 8];
        let n = bytes.len().min(8);
        first[..n].copy_from_slice(&bytes[..n]);
        self.0 = (self.0 ^ u64::from_le_bytes(first)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    #[inline]
    fn write_usize(&mut self, _length_prefix: usize) {}
}

/// `BuildHasher` for maps keyed by [`JobKey`].
pub type BuildKeyHasher = std::hash::BuildHasherDefault<KeyHasher>;
