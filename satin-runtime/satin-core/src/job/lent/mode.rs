//! What serialising a job does with its borrowed parameters now: writes
//! them, keys them (their digests), or pins them.

use std::cell::{Cell, RefCell};

use serde::ser::SerializeTuple;

use super::cache;
use super::param::Wire;
use super::pins::{self, Digest, Erased, Spot};
use crate::job::borrow::Lent;
use crate::job::Param;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Each parameter's bytes, as any node decodes them (the root call).
    Write,
    /// As `Write`, but a value the run's root borrows is named by its
    /// digest if the thief said it holds it (a stolen call).
    Send,
    /// A borrowed parameter's digest in place of its bytes (keys).
    Key,
    /// Nothing written: the borrowed parameters are noted in `NOTED`.
    Pin,
}

thread_local! {
    static MODE: Cell<Mode> = const { Cell::new(Mode::Write) };
    static NOTED: RefCell<Vec<(Spot, Erased)>> = const { RefCell::new(Vec::new()) };
    static SENDING: RefCell<Sending> =
        const { RefCell::new(Sending { thief_holds: Vec::new(), named: Vec::new(), lent_seen: false }) };
}

/// What a pass that writes a call out for another node knows and meets.
struct Sending {
    /// The digests of the values the thief holds (set by [`for_thief`]).
    thief_holds: Vec<[u8; 32]>,
    /// The digests named instead of writing the values.
    named: Vec<[u8; 32]>,
    /// Whether a borrowed parameter was met.
    lent_seen: bool,
}

fn sending<R>(f: impl FnOnce(&mut Sending) -> R) -> R {
    SENDING.with(|s| f(&mut s.borrow_mut()))
}

/// Whether the thief holds the value digested `hash`; if so it is noted
/// as named.
fn named_for_thief(hash: [u8; 32]) -> bool {
    sending(|s| {
        let held = s.thief_holds.contains(&hash);
        if held {
            s.named.push(hash);
        }
        held
    })
}

/// Runs `take` (which takes a job for a remote thief and writes it out)
/// knowing that the thief holds the values digested in `holds`: only
/// those are named instead of written.
pub(crate) fn for_thief<R>(holds: &[[u8; 32]], take: impl FnOnce() -> R) -> R {
    struct Forget;
    impl Drop for Forget {
        fn drop(&mut self) {
            sending(|s| s.thief_holds.clear());
        }
    }
    sending(|s| s.thief_holds = holds.to_vec());
    let _forget = Forget;
    take()
}

/// Puts the thread in `mode` until the guard drops (unwinding too).
struct InMode(Mode);

impl InMode {
    fn enter(mode: Mode) -> InMode {
        InMode(MODE.with(|m| m.replace(mode)))
    }
}

impl Drop for InMode {
    fn drop(&mut self) {
        MODE.with(|m| m.set(self.0));
    }
}

fn mode() -> Mode {
    MODE.with(Cell::get)
}

/// While the guard lives, serialising a job on this thread writes its
/// key's bytes: borrowed parameters as their digests.
pub(crate) fn keying() -> impl Drop {
    InMode::enter(Mode::Key)
}

/// What a pass that wrote a call out met.
pub(crate) struct Written {
    /// The digests it named instead of writing the values.
    pub(crate) named: Vec<[u8; 32]>,
    /// Whether the call borrows anything (if not, its bytes are its key's).
    pub(crate) lends: bool,
}

/// Runs `write` (which serialises a call for another node); with `send`,
/// the root's borrowed values are named by digest (a stolen call).
pub(crate) fn writing<R>(send: bool, write: impl FnOnce() -> R) -> (R, Written) {
    sending(|s| {
        s.named.clear();
        s.lent_seen = false;
    });
    let out = {
        let _mode = InMode::enter(if send { Mode::Send } else { Mode::Write });
        write()
    };
    let (named, lends) = sending(|s| (std::mem::take(&mut s.named), s.lent_seen));
    (out, Written { named, lends })
}

/// The borrowed parameters of `job`, where they lie (owned ones are not
/// looked at).
pub(super) fn spots_of<J: serde::Serialize + ?Sized>(job: &J) -> Vec<(Spot, Erased)> {
    let _pin = InMode::enter(Mode::Pin);
    NOTED.with(|n| n.borrow_mut().clear());
    // A pass that writes nothing: `ser_field` skips, `ser_lent` notes.
    let _ = satin_proto::values::encoded_len(job);
    NOTED.with(|n| std::mem::take(&mut *n.borrow_mut()))
}

/// Writes one owned parameter of a job.
#[inline]
pub fn ser_field<T: Param, S: SerializeTuple>(tuple: &mut S, value: &T) -> Result<(), S::Error> {
    if mode() == Mode::Pin {
        return Ok(());
    }
    tuple.serialize_element(value)
}

/// Writes one shared borrowed parameter of a job (`&U`): its data, or a
/// digest that names it (see `param.rs`); in a key, its digest.
#[inline]
pub fn ser_lent<U: Lent + ?Sized, S: SerializeTuple>(tuple: &mut S, value: &U) -> Result<(), S::Error> {
    let mode = mode();
    if let Mode::Write | Mode::Send = mode {
        sending(|s| s.lent_seen = true);
    }
    match mode {
        Mode::Write => tuple.serialize_element(&Wire::Data(value)),
        Mode::Send => match pins::shared_digest(value) {
            Some(digest) if named_for_thief(digest.hash) => tuple.serialize_element(&Wire::<U>::Named(digest.hash)),
            // Large and keyed: the thief keeps it for later calls.
            Some(digest) if digest.len >= cache::KEEP_FROM => {
                tuple.serialize_element(&Wire::Keyed(digest.hash, digest.len, value))
            }
            Some(_) => tuple.serialize_element(&Wire::Data(value)),
            // A part of a value the thief holds (half of the root's
            // slice): the value's digest and the part's place.
            None => match pins::shared_part(value) {
                Some((whole, (from, len))) if named_for_thief(whole) => {
                    tuple.serialize_element(&Wire::<U>::Part(whole, from as u64, len as u64))
                }
                _ => tuple.serialize_element(&Wire::Data(value)),
            },
        },
        Mode::Key => tuple.serialize_element(&pins::digest_of(value)),
        Mode::Pin => {
            NOTED.with(|n| n.borrow_mut().push(pins::note(value)));
            Ok(())
        }
    }
}

/// Writes one `&mut U` parameter of a job: its data (its new contents
/// come back with the result); in a key, its digest.
#[inline]
pub fn ser_lent_mut<U: Lent + ?Sized, S: SerializeTuple>(tuple: &mut S, value: &U) -> Result<(), S::Error> {
    match mode() {
        Mode::Write | Mode::Send => {
            sending(|s| s.lent_seen = true);
            tuple.serialize_element(value)
        }
        Mode::Key => tuple.serialize_element(&pins::digest_of(value)),
        Mode::Pin => Ok(()),
    }
}

/// The digest of `value`'s encoding: blake3 of its postcard bytes.
pub(super) fn hash<U: serde::Serialize + ?Sized>(value: &U) -> Digest {
    let _write = InMode::enter(Mode::Write);
    let mut hasher = blake3::Hasher::new();
    satin_proto::values::hash_into(value, &mut hasher)
        .expect("postcard's format encodes any serde value with a known length");
    Digest { hash: *hasher.finalize().as_bytes(), len: hasher.count() }
}
