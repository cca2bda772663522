//! How a function's results become bytes (`Job::Codec`): serde's for a
//! function whose calls travel, none for a local one.
//!
//! A local function's results never leave its process, so they need not
//! be serde: `#[divide_and_conquer(local)] fn f(..) -> Stats` compiles
//! for a `Stats` without serde. The runtime still names the encoding in
//! code that a local job never reaches (publication, lookups, remote
//! outcomes); there the codec says why it cannot.

use serde::de::DeserializeOwned;
use serde::Serialize;

use satin_proto::values::{self, Error};

/// Encodes and decodes results of type `T`.
pub trait ResultCodec<T>: 'static {
    /// `value` in postcard's format.
    fn encode(value: &T) -> Result<Vec<u8>, Error>;
    /// A result from its encoding.
    fn decode(bytes: &[u8]) -> Result<T, Error>;
    /// Whether `value` encodes to more than `limit` bytes.
    fn exceeds(value: &T, limit: usize) -> Result<bool, Error>;
}

/// Results that travel: serde, in postcard's format.
pub enum SerdeCodec {}

impl<T: Serialize + DeserializeOwned> ResultCodec<T> for SerdeCodec {
    #[inline]
    fn encode(value: &T) -> Result<Vec<u8>, Error> {
        values::to_vec(value)
    }
    #[inline]
    fn decode(bytes: &[u8]) -> Result<T, Error> {
        values::from_bytes(bytes)
    }
    #[inline]
    fn exceeds(value: &T, limit: usize) -> Result<bool, Error> {
        values::exceeds(value, limit)
    }
}

/// Results of a local function: they stay in their process.
pub enum LocalCodec {}

impl<T> ResultCodec<T> for LocalCodec {
    fn encode(_: &T) -> Result<Vec<u8>, Error> {
        Err(Error::SerdeSerCustom)
    }
    fn decode(_: &[u8]) -> Result<T, Error> {
        Err(Error::SerdeDeCustom)
    }
    fn exceeds(_: &T, _: usize) -> Result<bool, Error> {
        Err(Error::SerdeSerCustom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_results_round_trip_and_local_ones_refuse() {
        let bytes = <SerdeCodec as ResultCodec<Vec<u64>>>::encode(&vec![1, 300]).unwrap();
        assert_eq!(<SerdeCodec as ResultCodec<Vec<u64>>>::decode(&bytes).unwrap(), vec![1, 300]);
        assert_eq!(<SerdeCodec as ResultCodec<Vec<u64>>>::exceeds(&vec![1, 300], 3), Ok(true));
        struct NoSerde;
        assert!(<LocalCodec as ResultCodec<NoSerde>>::encode(&NoSerde).is_err());
        assert!(<LocalCodec as ResultCodec<NoSerde>>::decode(&bytes).is_err());
    }
}
