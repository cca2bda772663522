//! The same bytes as postcard, and the same values and errors back, for
//! every serde shape.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use super::{encoded_len, exceeds, from_bytes, hash_into, take_from_bytes, to_vec};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Shape {
    Unit,
    Newtype(i32),
    Tuple(u16, i128, char),
    Struct { a: Option<u8>, b: String, c: Vec<i64> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Unit;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Wrapper(u64);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Everything {
    flags: (bool, i8, u8),
    small: (i16, u16, i32, u32),
    wide: (i64, u64, i128, u128),
    floats: (f32, f64),
    text: (char, String),
    #[serde(with = "serde_bytes")]
    bytes: Vec<u8>,
    unit: ((), Unit, Wrapper),
    shapes: Vec<Shape>,
    map: BTreeMap<String, Option<Vec<u32>>>,
    nested: Vec<Vec<(u8, i64)>>,
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        Just(Shape::Unit),
        any::<i32>().prop_map(Shape::Newtype),
        (any::<u16>(), any::<i128>(), any::<char>()).prop_map(|(a, b, c)| Shape::Tuple(a, b, c)),
        (any::<Option<u8>>(), ".{0,8}", proptest::collection::vec(any::<i64>(), 0..8))
            .prop_map(|(a, b, c)| Shape::Struct { a, b, c }),
    ]
}

fn everything() -> impl Strategy<Value = Everything> {
    (
        (any::<(bool, i8, u8)>(), any::<(i16, u16, i32, u32)>(), any::<(i64, u64, i128, u128)>()),
        (any::<(f32, f64)>(), (any::<char>(), ".{0,20}"), proptest::collection::vec(any::<u8>(), 0..64)),
        any::<u64>(),
        proptest::collection::vec(shape(), 0..6),
        proptest::collection::btree_map(".{0,6}", any::<Option<Vec<u32>>>(), 0..5),
        proptest::collection::vec(proptest::collection::vec(any::<(u8, i64)>(), 0..4), 0..4),
    )
        .prop_map(|((flags, small, wide), (floats, text, bytes), w, shapes, map, nested)| Everything {
            flags,
            small,
            wide,
            floats,
            text,
            bytes,
            unit: ((), Unit, Wrapper(w)),
            shapes,
            map,
            nested,
        })
}

fn hash_of(v: &impl Serialize) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    hash_into(v, &mut h).unwrap();
    *h.finalize().as_bytes()
}

/// Values that compare equal after a round trip (NaN does not).
fn same(a: &Everything, b: &Everything) -> bool {
    postcard::to_allocvec(a).unwrap() == postcard::to_allocvec(b).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn the_bytes_are_postcards_and_read_back_as_postcard_reads_them(v in everything()) {
        let ours = to_vec(&v).unwrap();
        let theirs = postcard::to_allocvec(&v).unwrap();
        prop_assert_eq!(&ours, &theirs);
        prop_assert_eq!(encoded_len(&v).unwrap(), theirs.len());
        for limit in [0, theirs.len() / 2, theirs.len().saturating_sub(1), theirs.len(), theirs.len() + 1] {
            // (No zero-sized elements here: the answer is exact.)
            prop_assert_eq!(exceeds(&v, limit).unwrap(), theirs.len() > limit, "limit {}", limit);
        }
        prop_assert_eq!(hash_of(&v), *blake3::hash(&theirs).as_bytes());
        let back: Everything = from_bytes(&theirs).unwrap();
        prop_assert!(same(&back, &v));
        let mut longer = theirs.clone();
        longer.extend_from_slice(&[1, 2, 3]);
        let (_, rest): (Everything, _) = take_from_bytes(&longer).unwrap();
        prop_assert_eq!(rest, &[1u8, 2, 3][..]);
    }

    #[test]
    fn truncated_and_flipped_bytes_fail_as_postcard_fails(v in everything(), at in any::<usize>(), flip in 1u8..) {
        let bytes = postcard::to_allocvec(&v).unwrap();
        let cut = at % bytes.len();
        let ours = from_bytes::<Everything>(&bytes[..cut]).map(|e| to_vec(&e).unwrap());
        let theirs = postcard::from_bytes::<Everything>(&bytes[..cut]).map(|e| postcard::to_allocvec(&e).unwrap());
        prop_assert_eq!(ours, theirs);
        let mut flipped = bytes.clone();
        flipped[cut] ^= flip;
        let ours = from_bytes::<Everything>(&flipped).map(|e| to_vec(&e).unwrap());
        let theirs = postcard::from_bytes::<Everything>(&flipped).map(|e| postcard::to_allocvec(&e).unwrap());
        prop_assert_eq!(ours, theirs);
    }

    #[test]
    fn every_integer_width_round_trips(a in any::<u64>(), b in any::<i64>(), c in any::<u128>(), d in any::<i16>()) {
        let v = (a, b, c, d, vec![a; 3]);
        prop_assert_eq!(to_vec(&v).unwrap(), postcard::to_allocvec(&v).unwrap());
        prop_assert_eq!(from_bytes::<(u64, i64, u128, i16, Vec<u64>)>(&to_vec(&v).unwrap()).unwrap(), v);
    }

    #[test]
    fn garbage_fails_as_postcard_fails(garbage in proptest::collection::vec(any::<u8>(), 0..64)) {
        let ours = from_bytes::<(u16, u32, u64, u128, bool, Option<char>)>(&garbage);
        let theirs = postcard::from_bytes::<(u16, u32, u64, u128, bool, Option<char>)>(&garbage);
        prop_assert_eq!(ours, theirs);
    }
}

#[test]
fn a_large_sequence_is_postcards_and_hashes_in_pieces() {
    let v: Vec<u64> = (0..300_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    let theirs = postcard::to_allocvec(&v).unwrap();
    assert_eq!(to_vec(&v).unwrap(), theirs);
    assert_eq!(hash_of(&v), *blake3::hash(&theirs).as_bytes());
    assert_eq!(from_bytes::<Vec<u64>>(&theirs).unwrap(), v);
    // A byte string longer than the hash's buffer goes to it whole.
    let big = serde_bytes::ByteBuf::from(vec![7u8; 200_000]);
    assert_eq!(hash_of(&big), *blake3::hash(&postcard::to_allocvec(&big).unwrap()).as_bytes());
}

#[test]
fn what_postcard_cannot_encode_or_decode_fails_here_too() {
    struct NoLength;
    impl Serialize for NoLength {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeSeq;
            s.serialize_seq(None)?.end()
        }
    }
    assert_eq!(to_vec(&NoLength), Err(postcard::Error::SerializeSeqLengthUnknown));
    // Not self-describing: what would need to guess the shape is refused.
    let ours = from_bytes::<serde::de::IgnoredAny>(&[0]).err();
    assert_eq!(ours, postcard::from_bytes::<serde::de::IgnoredAny>(&[0]).err());
    assert_eq!(ours, Some(postcard::Error::WontImplement));
}
