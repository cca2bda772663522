//! Job keys: the identity of a call that survives crashes and machine borders.

use std::fmt;

use super::Job;

/// blake3(function id ‖ 0 ‖ postcard(params)): equal for equal calls of the
/// same function, whichever machine computes it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct JobKey(pub [u8; 32]);

impl JobKey {
    /// Computes the key of `job`.
    pub fn of<J: Job>(job: &J) -> JobKey {
        let mut hasher = blake3::Hasher::new();
        hasher.update(J::FN_ID.as_bytes());
        hasher.update(&[0]);
        let params = postcard::to_stdvec(job).expect("postcard encoding into a Vec cannot fail");
        hasher.update(&params);
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
