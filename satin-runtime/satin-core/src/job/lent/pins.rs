//! Values that stay put for a while, and their digests, hashed once.
//!
//! What a distributed run's root call borrows lies where the program
//! holds it until the run ends, and what a stolen call borrows lies in
//! its decoded parameters until the call returns: [`pin`] notes where
//! (address, size and type), and the first key that carries such a value
//! hashes it and leaves its digest here for every later one. A pinned
//! value cannot move or be freed while it is pinned (the pin lives in the
//! frame that borrows it), so a place names one value for the pin's life.
//!
//! The root's borrowed values are on every node of the run (each node's
//! program makes the same call), so a stolen call that borrows one goes
//! out naming it by its digest, and the thief borrows its own copy
//! ([`resolve`]); the root's pin then waits, when the run ends, until no
//! such borrow is left.

use std::sync::{Arc, Condvar, Mutex, OnceLock};

use super::{cache, mode};
use crate::job::borrow::Lent;
use crate::job::Travel;

/// Where a borrowed value lies: address, size and type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Spot {
    addr: usize,
    size: usize,
    pub(super) ty: &'static str,
}

impl Spot {
    pub(super) fn of<U: ?Sized>(value: &U) -> Spot {
        Spot {
            addr: value as *const U as *const u8 as usize,
            size: std::mem::size_of_val(value),
            ty: std::any::type_name::<U>(),
        }
    }
}

/// A value's digest: blake3 of its encoding, and the encoding's length.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Digest {
    pub(crate) hash: [u8; 32],
    pub(crate) len: u64,
}

/// A pinned value's pointer, its lifetime and type erased: the bits of a
/// `*const U` (thin or wide), read back only as the same `U` (its
/// [`Spot::ty`] checked first).
#[derive(Clone, Copy)]
pub(super) struct Erased([usize; 2]);

impl Erased {
    pub(super) fn of<U: ?Sized>(value: &U) -> Erased {
        let ptr: *const U = value;
        let mut bits = [0usize; 2];
        let n = std::mem::size_of::<*const U>();
        assert!(n <= std::mem::size_of_val(&bits), "a pointer is at most two words");
        // SAFETY: `n` bytes of a pointer copied into a buffer at least as
        // large; they are read back only as the same pointer type.
        unsafe { std::ptr::copy_nonoverlapping(&ptr as *const *const U as *const u8, bits.as_mut_ptr() as *mut u8, n) };
        Erased(bits)
    }

    /// # Safety
    /// `self` was made by `Erased::of::<U>` with this very `U`.
    pub(super) unsafe fn as_ptr<U: ?Sized>(self) -> *const U {
        // SAFETY: per the contract, the bytes are those of a `*const U`.
        unsafe { std::ptr::read_unaligned(self.0.as_ptr() as *const *const U) }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Borrowed by the run's root call: every node of the run holds it.
    Root,
    /// Borrowed by a call on this node only.
    Here,
}

struct Pin {
    spot: Spot,
    at: Erased,
    kind: Kind,
    /// The pin that made it (see [`Pinned`]).
    owner: u64,
    digest: Arc<OnceLock<Digest>>,
    /// Other nodes may hold it: the root's, or one kept from another node
    /// (`cache.rs`). Only such a value goes out by its digest.
    shared: bool,
    /// Borrows of it that other nodes' calls made ([`resolve`]).
    uses: Arc<()>,
}

static PINS: Mutex<Vec<Pin>> = Mutex::new(Vec::new());
static RELEASED: Condvar = Condvar::new();
static NEXT_OWNER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn pins() -> std::sync::MutexGuard<'static, Vec<Pin>> {
    PINS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The borrowed parameters of a call, pinned until this drops.
#[must_use = "a value is pinned only while the guard lives"]
pub struct Pinned(u64);

impl Drop for Pinned {
    fn drop(&mut self) {
        let mut all = pins();
        let mut gone = Vec::new();
        all.retain(|p| {
            let mine = p.owner == self.0;
            if mine {
                gone.push(Arc::clone(&p.uses));
            }
            !mine
        });
        // Calls of other nodes that borrow the value here must end first.
        while gone.iter().any(|u| Arc::strong_count(u) > 1) {
            all = RELEASED.wait(all).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// A borrow of a pinned value by a call another node sent: the pin waits
/// for it.
pub(crate) struct Use(Option<Arc<()>>);

impl Drop for Use {
    fn drop(&mut self) {
        // Released under the lock the pin waits with: no wake-up is missed.
        let all = pins();
        drop(self.0.take());
        RELEASED.notify_all();
        drop(all);
    }
}

/// Pins what the run's root call `job` borrows until the guard drops;
/// the caller holds `job`'s borrows for at least as long.
pub(crate) fn pin_root<J: crate::Job>(job: &J) -> Pinned {
    pin_as(job, Kind::Root)
}

/// Pins what `job`, a call run here, borrows until the guard drops; the
/// caller holds `job`'s borrows for at least as long.
pub fn pin<J: crate::Job>(job: &J) -> Pinned {
    pin_as(job, Kind::Here)
}

fn pin_as<J: crate::Job>(job: &J, kind: Kind) -> Pinned {
    let owner = NEXT_OWNER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // A call that changes its data pins nothing: its data may change.
    if J::MUTATES || J::LOCAL.is_some() {
        return Pinned(owner);
    }
    let noted = mode::spots_of(job);
    if !noted.is_empty() {
        let mut all = pins();
        for (spot, at) in noted {
            // A value pinned already (two parameters borrowing one value,
            // a stolen call borrowing the root's) shares its digest; one
            // kept from another node comes with it.
            let (digest, shared) = match all.iter().find(|p| p.spot == spot) {
                Some(p) => (Arc::clone(&p.digest), p.shared || kind == Kind::Root),
                None => match cache::digest_at(&spot) {
                    Some(kept) => (Arc::new(OnceLock::from(kept)), true),
                    None => (Arc::default(), kind == Kind::Root),
                },
            };
            all.push(Pin { spot, at, kind, owner, digest, shared, uses: Arc::new(()) });
        }
    }
    Pinned(owner)
}

/// Where `value` lies, to pin it.
pub(super) fn note<U: ?Sized>(value: &U) -> (Spot, Erased) {
    (Spot::of(value), Erased::of(value))
}

/// The digest of `value`: remembered if it is pinned; made from the
/// digest of the pinned value it is a part of (a sub-slice of a pinned
/// slice: `Travel::place_in`) and its place there, without reading its
/// bytes; hashed otherwise. A part of a root value is named from the
/// root's digest even where the part is pinned too (a stolen call's
/// borrow of it), so that every node keys it alike.
pub(super) fn digest_of<U: Lent + ?Sized>(value: &U) -> [u8; 32] {
    let spot = Spot::of(value);
    let (exact, part) = {
        let all = pins();
        let exact = all.iter().find(|p| p.spot == spot).map(|p| (Arc::clone(&p.digest), p.kind));
        let whole =
            |kind: Option<Kind>| whole_of(&all, value, kind).map(|(p, place)| (Arc::clone(&p.digest), p.at, place));
        let part = match exact {
            Some((_, Kind::Root)) => None,
            Some(_) => whole(Some(Kind::Root)),
            None => whole(Some(Kind::Root)).or_else(|| whole(None)),
        };
        (exact, part)
    };
    if let Some((digest, at, place)) = part {
        // SAFETY: `at` was made from a `&U` of this very type (`whole_of`
        // checked), and the value stays pinned while `value`, a part of
        // it, is borrowed.
        let whole = unsafe { &*at.as_ptr::<U>() };
        return part_digest(digest.get_or_init(|| mode::hash(whole)), place);
    }
    match exact {
        Some((digest, _)) => digest.get_or_init(|| mode::hash(value)).hash,
        None => mode::hash(value).hash,
    }
}

/// The pinned value `value` is a part of (of `kind`, if given), and the
/// part's place in it.
fn whole_of<'p, U: Travel + ?Sized>(
    all: &'p [Pin],
    value: &U,
    kind: Option<Kind>,
) -> Option<(&'p Pin, (usize, usize))> {
    let spot = Spot::of(value);
    all.iter().filter(|p| kind.is_none_or(|k| p.kind == k)).find_map(|p| {
        let inside = p.spot.ty == spot.ty
            && spot.addr >= p.spot.addr
            && spot.addr.checked_add(spot.size)? <= p.spot.addr.checked_add(p.spot.size)?;
        if !inside || p.spot == spot {
            return None;
        }
        // SAFETY: `p.at` was made from a `&U` of this very type (`ty`
        // checked); pinned, it stays where it is while the lock is held.
        let whole = unsafe { &*p.at.as_ptr::<U>() };
        U::place_in(whole, value).map(|place| (p, place))
    })
}

/// The digest of the part at `place` of the value digested `whole`.
fn part_digest(whole: &Digest, (from, len): (usize, usize)) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(b"satin: a part of a borrowed value");
    h.update(&whole.hash);
    h.update(&(from as u64).to_le_bytes());
    h.update(&(len as u64).to_le_bytes());
    *h.finalize().as_bytes()
}

/// If `value` is a part of a value other nodes may hold (the root's, or
/// one kept from another node), keyed already: that value's digest and
/// the part's place in it. A thief that holds the value borrows the part
/// of its own copy.
pub(super) fn shared_part<U: Travel + ?Sized>(value: &U) -> Option<([u8; 32], (usize, usize))> {
    let all = pins();
    all.iter().filter(|p| p.shared).find_map(|p| {
        let digest = p.digest.get()?.hash;
        let (_, place) = whole_of(std::slice::from_ref(p), value, None)?;
        Some((digest, place))
    })
}

/// The digest of `value` if it is a value other nodes may hold (the
/// root's, or one kept from another node), keyed already: a node that
/// holds it is sent the digest alone, another the digest with the data.
/// (A part of such a value — a subtree a call was given — travels as
/// data: it is not kept.)
pub(super) fn shared_digest<U: ?Sized>(value: &U) -> Option<Digest> {
    let spot = Spot::of(value);
    let all = pins();
    all.iter().find(|p| p.spot == spot && p.shared).and_then(|p| p.digest.get().copied())
}

/// A pin of the root's with `digest`.
fn is_root_with(p: &Pin, digest: &[u8; 32]) -> bool {
    p.kind == Kind::Root && p.digest.get().is_some_and(|d| d.hash == *digest)
}

/// The digests of the values this node holds for the program: those the
/// root call borrows (keyed already), and those kept from other nodes.
pub(crate) fn held_values() -> Vec<[u8; 32]> {
    let mut digests: Vec<[u8; 32]> =
        pins().iter().filter(|p| p.kind == Kind::Root).filter_map(|p| p.digest.get().map(|d| d.hash)).collect();
    digests.extend(cache::digests());
    digests.sort_unstable();
    digests.dedup();
    digests
}

/// Whether this node holds a value of any type with `digest`: a root
/// value pinned here, or one kept from another node.
pub(super) fn holds_any(digest: &[u8; 32]) -> bool {
    pins().iter().any(|p| is_root_with(p, digest)) || cache::holds(digest)
}

/// A borrow of the root's value of type `U` named `digest`, if this node
/// pins one: its pointer, and the use the pin waits for.
pub(super) fn resolve<U: ?Sized>(digest: &[u8; 32]) -> Option<(*const U, Use)> {
    let ty = std::any::type_name::<U>();
    let all = pins();
    let p = all.iter().find(|p| p.spot.ty == ty && is_root_with(p, digest))?;
    // SAFETY: `p.at` was made from a `&U` of this very type (`ty` checked).
    let ptr = unsafe { p.at.as_ptr::<U>() };
    Some((ptr, Use(Some(Arc::clone(&p.uses)))))
}

/// The part at `place` of the root's value of type `U` named `digest`, if
/// this node pins one (see [`resolve`]).
pub(super) fn resolve_part<U: Travel + ?Sized>(digest: &[u8; 32], place: (usize, usize)) -> Option<(*const U, Use)> {
    let (whole, used) = resolve::<U>(digest)?;
    // SAFETY: `resolve` gave a pointer to a pinned `U` that stays where
    // it is while `used` lives.
    let part = U::part(unsafe { &*whole }, place)?;
    Some((part as *const U, used))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_names_address_size_and_type() {
        let v = [1u64, 2, 3];
        assert_eq!(Spot::of(&v[..]), Spot::of(&v[..]));
        assert_ne!(Spot::of(&v[..]), Spot::of(&v[..2]), "a shorter slice at the same address");
        let whole: &[u64] = &v;
        let first: &u64 = &v[0];
        assert_ne!(Spot::of(whole).ty, Spot::of(first).ty);
    }

    #[test]
    fn an_erased_pointer_reads_back_as_itself() {
        let v = [1u64, 2, 3];
        let s: &[u64] = &v[1..];
        // SAFETY: made from a `&[u64]`, read as one.
        let back = unsafe { &*Erased::of(s).as_ptr::<[u64]>() };
        assert_eq!(back, &[2, 3]);
        let t = "text";
        // SAFETY: made from a `&str`, read as one.
        assert_eq!(unsafe { &*Erased::of(t).as_ptr::<str>() }, "text");
    }
}
