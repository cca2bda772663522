//! The wire codec: round trips, truncation, caps, and arbitrary bytes.

use proptest::prelude::*;
use satin_proto::checkpoint::ResultMeta;
use satin_proto::codec::{decode, encode, encode_segments, FrameError, HandshakeError, Hello, PROTOCOL_VERSION};
use satin_proto::JobKey;
use satin_proto::{Entry, JobBar, JobKind, JobSpec, Msg, NodeFigures};

fn arb_msg() -> impl Strategy<Value = Msg> {
    let key = any::<[u8; 32]>().prop_map(JobKey);
    // Mostly small, sometimes large enough to travel as a segment of its own.
    let bytes = prop_oneof![
        4 => proptest::collection::vec(any::<u8>(), 0..300),
        1 => proptest::collection::vec(any::<u8>(), 4096..9000),
    ];
    prop_oneof![
        any::<u64>().prop_map(|id| Msg::StealRequest { id, holds: vec![[id as u8; 32]] }),
        (any::<u64>(), key.clone(), any::<u64>(), bytes.clone(), any::<(bool, bool)>(), any::<(u32, u32, u64)>())
            .prop_map(|(id, key, stamp, payload, (redone, duplicate), (epoch, depth, parent))| {
                let payload = payload.into();
                Msg::StealReply {
                    id,
                    job: Some(JobSpec { key, stamp, payload, redone, duplicate, epoch, depth, parent }),
                }
            }),
        (any::<u64>(), key.clone(), bytes.clone()).prop_map(|(stamp, key, value)| Msg::JobResult {
            stamp,
            key,
            value: value.into()
        }),
        (key.clone(), bytes.clone(), any::<(u32, u64, u64)>()).prop_map(|(key, v, (depth, id, parent))| {
            Msg::TablePut { key, entry: Entry::Value(v.into()), meta: ResultMeta { depth, id, parent } }
        }),
        (key.clone(), any::<u64>()).prop_map(|(key, h)| Msg::TablePut {
            key,
            entry: Entry::Pointer(h),
            meta: ResultMeta::UNKNOWN
        }),
        (key.clone(), any::<(u64, u32)>()).prop_map(|(key, (holder, epoch))| Msg::TablePut {
            key,
            entry: Entry::Running { holder, epoch },
            meta: ResultMeta::UNKNOWN
        }),
        (key, any::<u32>()).prop_map(|(key, epoch)| Msg::NotRunning { key, epoch }),
        Just(Msg::Leave),
        Just(Msg::Terminate { run: 1, value: Some(vec![7; 3].into()), shower: 1, holder: 2 }),
        Just(Msg::Terminate { run: 2, value: None, shower: 3, holder: 3 }),
        Just(Msg::AskAnswer { run: 2 }),
        Just(Msg::AnswerValue { run: 2, value: Some(vec![1; 40].into()) }),
        Just(Msg::AnswerValue { run: 3, value: None }),
        Just(Msg::Shown { run: 1 }),
        Just(Msg::ProgramOver { runs: 4 }),
        (any::<(u64, u64)>(), proptest::collection::vec(any::<(u16, u64, u64, u8, bool)>(), 0..40)).prop_map(
            |((cpu_ms, rss_bytes), bars)| {
                let jobs = bars
                    .into_iter()
                    .map(|(worker, start_us, took_us, k, running)| JobBar {
                        worker,
                        start_us,
                        took_us,
                        kind: JobKind::ALL[k as usize % JobKind::ALL.len()],
                        running,
                    })
                    .collect();
                Msg::Figures(NodeFigures { cpu_ms, rss_bytes, jobs, ..Default::default() })
            }
        ),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn frames_round_trip_and_every_prefix_asks_for_more(msg in arb_msg()) {
        let frame = encode(&msg, 1 << 20).unwrap();
        let (back, used) = decode::<Msg>(&frame, 1 << 20).unwrap().unwrap();
        prop_assert_eq!(&back, &msg);
        prop_assert_eq!(used, frame.len());
        for cut in 0..frame.len() {
            prop_assert_eq!(decode::<Msg>(&frame[..cut], 1 << 20).unwrap(), None);
        }
    }

    /// A frame in segments is the same bytes, and its large strings are
    /// the message's own (not copies).
    #[test]
    fn segments_are_the_frame_and_large_strings_are_not_copied(msg in arb_msg()) {
        let whole = encode(&msg, 1 << 20).unwrap();
        let segments = encode_segments(&msg, 1 << 20).unwrap();
        let joined: Vec<u8> = segments.iter().flat_map(|s| s.iter().copied()).collect();
        prop_assert_eq!(&joined, &whole);
        let big = match &msg {
            Msg::StealReply { job: Some(job), .. } => Some(&job.payload),
            Msg::JobResult { value, .. } => Some(value),
            _ => None,
        };
        if let Some(big) = big.filter(|b| b.len() >= 4096) {
            prop_assert!(segments.iter().any(|s| s.as_ptr() == big.as_ptr() && s.len() == big.len()));
        }
        prop_assert_eq!(encode_segments(&msg, whole.len() - 5).err(), Some(FrameError::TooLarge { len: whole.len() - 4, max: whole.len() - 5 }));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode::<Msg>(&bytes, 1 << 20);
        let _ = decode::<Hello>(&bytes, 1 << 20);
    }

    #[test]
    fn corrupted_frames_are_errors_or_other_messages_never_panics(msg in arb_msg(), at in any::<usize>(), x in 1u8..) {
        let mut frame = encode(&msg, 1 << 20).unwrap();
        let i = 4 + at % (frame.len() - 4).max(1);
        if i < frame.len() {
            frame[i] ^= x;
        }
        let _ = decode::<Msg>(&frame, 1 << 20);
    }
}

#[test]
fn the_size_cap_is_enforced_both_ways() {
    let big = Msg::JobResult { stamp: 1, key: JobKey([0; 32]), value: vec![7; 5000].into() };
    assert!(matches!(encode(&big, 1000), Err(FrameError::TooLarge { max: 1000, .. })));
    let frame = encode(&big, 1 << 20).unwrap();
    let err = decode::<Msg>(&frame, 1000).unwrap_err();
    assert!(err.to_string().contains("exceeds the limit of 1000 bytes"), "{err}");
    // A hostile length prefix is refused before any allocation.
    assert!(matches!(decode::<Msg>(&[0xff, 0xff, 0xff, 0xff], 1000), Err(FrameError::TooLarge { .. })));
}

#[test]
fn trailing_garbage_inside_a_frame_is_malformed() {
    let mut frame = encode(&Msg::Leave, 100).unwrap();
    frame.push(0);
    frame[0] += 1;
    assert!(matches!(decode::<Msg>(&frame, 100), Err(FrameError::Malformed(_))));
}

#[test]
fn handshake_mismatches_say_what_differs() {
    let ours = Hello::new("nqueens 0.1.0", &["a::f(u32) -> u64", "a::g() -> ()"]);
    let same_other_order = Hello::new("nqueens 0.1.0", &["a::g() -> ()", "a::f(u32) -> u64"]);
    assert_eq!(ours.check(&same_other_order), Ok(()));
    let other_app = Hello::new("fib 0.1.0", &["a::f(u32) -> u64", "a::g() -> ()"]);
    assert!(ours.check(&other_app).unwrap_err().to_string().contains("runs `fib 0.1.0`"));
    let other_fns = Hello::new("nqueens 0.1.0", &["a::f(u64) -> u64"]);
    assert_eq!(ours.check(&other_fns), Err(HandshakeError::Functions));
    let mut old = ours.clone();
    old.protocol_version = PROTOCOL_VERSION + 1;
    assert!(ours.check(&old).unwrap_err().to_string().contains("protocol version mismatch"));
    // Same program, same code, another problem: refused, naming the roots.
    let run = ours.clone().with_root([1; 32]);
    let other_args = ours.clone().with_root([2; 32]);
    let e = run.check(&other_args).unwrap_err();
    assert_eq!(e, HandshakeError::Root { ours: [1; 32], theirs: [2; 32] });
    let text = e.to_string();
    assert!(
        text.contains("other arguments") && text.contains("020202020202") && text.contains("010101010101"),
        "{text}"
    );
    assert_eq!(run.check(&ours.clone().with_root([1; 32])), Ok(()));
    // Another build of the same functions: the code differs.
    let rebuilt = ours.clone().with_functions([9; 32]);
    assert_eq!(ours.check(&rebuilt), Err(HandshakeError::Functions));
}
