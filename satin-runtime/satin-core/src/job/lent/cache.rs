//! Large borrowed values other nodes sent, kept by digest for the life
//! of the program: a value crosses to a node once, whatever the number of
//! steals and runs that borrow it.
//!
//! A victim that sends a large value it knows the digest of (one it
//! pinned: see `pins.rs`) sends the digest with it (`Wire::Keyed`); the
//! thief keeps the decoded value here and lists its digest in every later
//! steal request, so later calls that borrow it — in this run or the next
//! — come with the digest only and borrow the kept value. A program of
//! two runs whose second borrows what the first built (`kdtree --build`)
//! sends it once per node, not once per steal.
//!
//! What is kept is bounded in bytes (`SATIN_VALUE_CACHE_MB`, default
//! 1024; the oldest goes first). A value dropped from here lives on in the
//! calls still borrowing it.

use std::any::Any;
use std::sync::{Arc, Mutex, OnceLock};

use super::pins::{Digest, Erased, Spot};
use crate::job::Travel;

/// Values that encode to fewer bytes than this travel as data every
/// time: their digest would save little.
pub(super) const KEEP_FROM: u64 = 64 * 1024;

/// The owned value behind a kept borrow.
///
/// Only ever read through the `&U` made from it when it was kept
/// ([`keep`]), and dropped wherever its last holder drops it.
struct Owned<O>(#[allow(dead_code)] O);

// SAFETY: no `&O` is handed out after `keep` borrowed it once on its own
// thread: other threads read only the `&U` made then (`U: Sync`, as every
// borrowed parameter is) and may drop the value (`O: Send`).
unsafe impl<O: Send> Sync for Owned<O> {}

/// What keeps a kept value alive for a call that borrows it.
pub(crate) type Keep = Arc<dyn Any + Send + Sync>;

struct Entry {
    digest: [u8; 32],
    len: u64,
    /// Where the borrow lies (address, size, type), and the borrow.
    spot: Spot,
    at: Erased,
    value: Keep,
}

struct Cache {
    entries: Vec<Entry>,
    bytes: u64,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache { entries: Vec::new(), bytes: 0 });

fn cache() -> std::sync::MutexGuard<'static, Cache> {
    CACHE.lock().unwrap_or_else(|p| p.into_inner())
}

/// How many bytes of values are kept at most.
fn limit() -> u64 {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        let mb = std::env::var("SATIN_VALUE_CACHE_MB").ok().and_then(|s| s.parse::<u64>().ok()).unwrap_or(1024);
        mb.saturating_mul(1 << 20)
    })
}

/// Keeps `value`, which another node sent with `digest`, for later calls
/// (if it fits); gives its borrow as `U` and what keeps it alive.
pub(super) fn keep<U: Travel<Owned = O> + ?Sized, O: Send + 'static>(digest: Digest, value: O) -> (*const U, Keep) {
    let value: Arc<Owned<O>> = Arc::new(Owned(value));
    let at: *const U = U::borrow(&value.0);
    let (spot, erased) = {
        // SAFETY: `value` lives in its `Arc` and does not move; the borrow
        // is only noted here.
        let borrow = unsafe { &*at };
        (Spot::of(borrow), Erased::of(borrow))
    };
    let keep: Keep = value;
    let mut c = cache();
    if digest.len <= limit() && !c.entries.iter().any(|e| e.digest == digest.hash && e.spot.ty == spot.ty) {
        c.bytes += digest.len;
        c.entries.push(Entry { digest: digest.hash, len: digest.len, spot, at: erased, value: Arc::clone(&keep) });
        while c.bytes > limit() {
            let oldest = c.entries.remove(0);
            c.bytes -= oldest.len;
        }
    }
    (at, keep)
}

/// A borrow of the kept value of type `U` named `digest`, and what keeps
/// it alive.
pub(super) fn find<U: ?Sized>(digest: &[u8; 32]) -> Option<(*const U, Keep)> {
    let ty = std::any::type_name::<U>();
    let c = cache();
    let e = c.entries.iter().find(|e| e.digest == *digest && e.spot.ty == ty)?;
    // SAFETY: `e.at` was made from a `&U` of this very type (`ty` checked).
    Some((unsafe { e.at.as_ptr::<U>() }, Arc::clone(&e.value)))
}

/// The digest of the kept value that lies at `spot`, if one does: a call
/// that borrows it is keyed without hashing it again.
pub(super) fn digest_at(spot: &Spot) -> Option<Digest> {
    // (While an entry is here its value is alive, so no other value can
    // lie at its place.)
    cache().entries.iter().find(|e| e.spot == *spot).map(|e| Digest { hash: e.digest, len: e.len })
}

/// Whether any value is kept under `digest`.
pub(super) fn holds(digest: &[u8; 32]) -> bool {
    cache().entries.iter().any(|e| e.digest == *digest)
}

/// The digests of the kept values.
pub(super) fn digests() -> Vec<[u8; 32]> {
    cache().entries.iter().map(|e| e.digest).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_value_is_found_by_digest_and_type_and_its_place_knows_its_digest() {
        let digest = Digest { hash: [7; 32], len: 100 };
        let (at, keep) = keep::<[u64], Vec<u64>>(digest, vec![1, 2, 3]);
        // SAFETY: `keep` holds the value.
        let slice = unsafe { &*at };
        assert_eq!(slice, &[1, 2, 3]);
        let (again, _) = find::<[u64]>(&[7; 32]).expect("kept");
        assert_eq!(again, at);
        assert!(find::<str>(&[7; 32]).is_none(), "another type under the same digest");
        assert!(holds(&[7; 32]));
        assert_eq!(digest_at(&Spot::of(slice)).map(|d| d.hash), Some([7; 32]));
        drop(keep);
    }
}
