//! Wire framing: length-prefixed postcard frames with a size cap, and the
//! versioned handshake that opens every connection.
//!
//! A frame is a 4-byte little-endian length followed by that many bytes of
//! postcard. Results have no fixed size limit in the protocol; the cap only
//! guards a node against abuse and is configurable. Decoding never panics:
//! truncated input asks for more bytes, anything else malformed is an error
//! that names the problem.

use std::fmt;

use serde::{de::DeserializeOwned, Deserialize, Serialize};

/// Version of the messages in [`crate::Msg`] and of this framing (12: a
/// node whose program is behind the run asks a stalled master for its
/// root, `Msg::RootWanted`/`RootGiven`; 11:
/// nodes of one host pass large frames through shared memory, the
/// frames `Place` and `Placed` of the QUIC driver; 9: a
/// copy of the root sends its result to the master, `Msg::RootResult`;
/// 7: a job says whether it is a duplicate, a node's figures carry its
/// memory and the jobs it ended; 6: packed frames name stretches of the
/// root by place).
pub const PROTOCOL_VERSION: u32 = 12;

/// Default cap on one frame: 256 MiB.
pub const DEFAULT_MAX_FRAME: usize = 256 << 20;

/// The bytes of a frame's length prefix.
pub const LEN_BYTES: usize = 4;

/// Why a frame could not be decoded (or encoded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The length prefix exceeds the cap: the peer is broken or hostile.
    TooLarge {
        /// The length the prefix claims.
        len: usize,
        /// The cap.
        max: usize,
    },
    /// The frame's bytes are not a valid message.
    Malformed(String),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooLarge { len, max } => {
                write!(f, "frame of {len} bytes exceeds the limit of {max} bytes (see --max-frame)")
            }
            FrameError::Malformed(why) => write!(f, "malformed frame: {why}"),
        }
    }
}

impl std::error::Error for FrameError {}

/// Encodes `msg` as one frame.
pub fn encode<T: Serialize>(msg: &T, max: usize) -> Result<Vec<u8>, FrameError> {
    // The body is written after room for its length, which is filled in
    // last, into a buffer of the frame's size: a frame of megabytes is
    // written once, neither copied nor grown.
    let size = postcard::experimental::serialized_size(msg).map_err(|e| FrameError::Malformed(e.to_string()))?;
    let mut frame = Vec::with_capacity(LEN_BYTES + size);
    frame.extend_from_slice(&[0u8; LEN_BYTES]);
    let frame = postcard::to_extend(msg, frame).map_err(|e| FrameError::Malformed(e.to_string()))?;
    let len = frame.len() - LEN_BYTES;
    if len > max || len > u32::MAX as usize {
        return Err(FrameError::TooLarge { len, max });
    }
    let mut frame = frame;
    frame[..LEN_BYTES].copy_from_slice(&(len as u32).to_le_bytes());
    Ok(frame)
}

/// [`encode`] as segments whose bytes, in order, are the frame's: a large
/// byte string of the message (a field read and written with
/// [`crate::shared_bytes`]) is its own segment, the very `Bytes` the
/// message holds, not a copy. For a writer that can send several
/// buffers in turn (QUIC streams take `Bytes` chunks).
pub fn encode_segments<T: Serialize>(msg: &T, max: usize) -> Result<Vec<bytes::Bytes>, FrameError> {
    let segments =
        crate::values::to_segments(msg, vec![0; LEN_BYTES]).map_err(|e| FrameError::Malformed(e.to_string()))?;
    let len = segments.len() - LEN_BYTES;
    if len > max || len > u32::MAX as usize {
        return Err(FrameError::TooLarge { len, max });
    }
    let mut head = segments.head;
    head[..LEN_BYTES].copy_from_slice(&(len as u32).to_le_bytes());
    let mut out = Vec::with_capacity(1 + segments.rest.len());
    out.push(bytes::Bytes::from(head));
    out.extend(segments.rest);
    Ok(out)
}

/// The whole length (prefix included) of the frame `buf` begins with,
/// once its prefix is there and within the cap `max`: room to read it into.
pub fn frame_len(buf: &[u8], max: usize) -> Option<usize> {
    let prefix = buf.get(..LEN_BYTES)?;
    let len = u32::from_le_bytes(prefix.try_into().expect("four bytes")) as usize;
    (len <= max).then_some(LEN_BYTES + len)
}

/// Decodes the first frame of `buf`: `Ok(None)` if `buf` holds only part of
/// it, else the message and the number of bytes it used.
pub fn decode<T: DeserializeOwned>(buf: &[u8], max: usize) -> Result<Option<(T, usize)>, FrameError> {
    let Some(prefix) = buf.get(..LEN_BYTES) else { return Ok(None) };
    let len = u32::from_le_bytes(prefix.try_into().expect("four bytes")) as usize;
    if len > max {
        return Err(FrameError::TooLarge { len, max });
    }
    let Some(body) = buf.get(LEN_BYTES..LEN_BYTES + len) else { return Ok(None) };
    let (msg, rest) = postcard::take_from_bytes::<T>(body).map_err(|e| FrameError::Malformed(e.to_string()))?;
    if !rest.is_empty() {
        return Err(FrameError::Malformed(format!("{} bytes after the message", rest.len())));
    }
    Ok(Some((msg, LEN_BYTES + len)))
}

/// [`decode`] of a frame held as `Bytes`: the message's large byte
/// strings are slices of `buf`, not copies (see [`crate::shared_bytes`]).
pub fn decode_shared<T: DeserializeOwned>(buf: &bytes::Bytes, max: usize) -> Result<Option<(T, usize)>, FrameError> {
    crate::shared_bytes::decode_from(buf, |b| decode(b, max))
}

/// The first message on every connection: both sides must run the same
/// protocol and the same application.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// [`PROTOCOL_VERSION`] of the sender's build.
    pub protocol_version: u32,
    /// Name and version of the application binary.
    pub application: String,
    /// blake3 over the sorted function ids the application registers (and,
    /// for real runs, a hash of each one's source): two builds with
    /// different annotated functions do not mix.
    pub functions: [u8; 32],
    /// The content key of the run's root call — the arguments the program
    /// was started with — once known: a node started with others (another
    /// problem) is refused.
    pub root: Option<[u8; 32]>,
}

/// Why two peers cannot work together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandshakeError {
    /// Different protocol versions (this build's, the peer's).
    Protocol {
        /// This build's.
        ours: u32,
        /// The peer's.
        theirs: u32,
    },
    /// Different programs, or versions of one.
    Application {
        /// This process's.
        ours: String,
        /// The peer's.
        theirs: String,
    },
    /// The same program name with other annotated functions (or bodies).
    Functions,
    /// The same program started on another problem (another root call).
    Root {
        /// This node's root key.
        ours: [u8; 32],
        /// The peer's.
        theirs: [u8; 32],
    },
}

/// The first bytes of a key, in hex, for messages.
fn short(key: &[u8; 32]) -> String {
    key[..6].iter().map(|b| format!("{b:02x}")).collect()
}

impl fmt::Display for HandshakeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HandshakeError::Protocol { ours, theirs } => {
                write!(f, "protocol version mismatch: this node speaks {ours}, the peer speaks {theirs}; run the same satin version on every node")
            }
            HandshakeError::Application { ours, theirs } => {
                write!(f, "application mismatch: this node runs `{ours}`, the peer runs `{theirs}`; every node must run the same binary")
            }
            HandshakeError::Functions => write!(
                f,
                "the peer's annotated functions, or their code, differ from this node's (same application, different build); rebuild every node from the same source"
            ),
            HandshakeError::Root { ours, theirs } => write!(
                f,
                "the peer was started with other arguments: its root call is {}…, this node's {}… (content keys); every node of a run must be started with the same arguments",
                short(theirs),
                short(ours)
            ),
        }
    }
}

impl std::error::Error for HandshakeError {}

impl Hello {
    /// A hello for `application` with the given function ids.
    pub fn new(application: impl Into<String>, function_ids: &[&str]) -> Hello {
        let mut ids: Vec<&str> = function_ids.to_vec();
        ids.sort_unstable();
        let mut h = blake3::Hasher::new();
        for id in ids {
            h.update(id.as_bytes());
            h.update(&[0]);
        }
        Hello {
            protocol_version: PROTOCOL_VERSION,
            application: application.into(),
            functions: *h.finalize().as_bytes(),
            root: None,
        }
    }

    /// The same, with `digest` standing for the functions (ids and code,
    /// see `satin::function_digest`).
    pub fn with_functions(mut self, digest: [u8; 32]) -> Hello {
        self.functions = digest;
        self
    }

    /// The same, naming the run's root call by its content key.
    pub fn with_root(mut self, key: [u8; 32]) -> Hello {
        self.root = Some(key);
        self
    }

    /// Checks a peer's hello against ours.
    pub fn check(&self, theirs: &Hello) -> Result<(), HandshakeError> {
        if self.protocol_version != theirs.protocol_version {
            return Err(HandshakeError::Protocol { ours: self.protocol_version, theirs: theirs.protocol_version });
        }
        if self.application != theirs.application {
            return Err(HandshakeError::Application {
                ours: self.application.clone(),
                theirs: theirs.application.clone(),
            });
        }
        if self.functions != theirs.functions {
            return Err(HandshakeError::Functions);
        }
        if let (Some(ours), Some(theirs)) = (self.root, theirs.root) {
            if ours != theirs {
                return Err(HandshakeError::Root { ours, theirs });
            }
        }
        Ok(())
    }
}
