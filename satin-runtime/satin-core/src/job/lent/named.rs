//! The digests a stolen call names instead of sending values, listed
//! after its bytes, so that a thief can tell before decoding anything
//! whether it holds them (`knows_call`).
//!
//! After the call's bytes: the digests, their count (4 bytes, little
//! endian), then [`MARK`]. The decoder of the call ignores what follows
//! its bytes. A call whose own bytes end as if in a list is at worst
//! refused by a thief that lacks digests it does not need, and runs on
//! its own node: the list is a hint, the call's bytes are the truth.

/// Ends a list of named digests.
const MARK: &[u8; 8] = b"satin#nd";

/// Appends the list of `named` digests to `payload` (nothing if none).
pub(crate) fn append(payload: &mut Vec<u8>, named: &[[u8; 32]]) {
    if named.is_empty() {
        return;
    }
    for digest in named {
        payload.extend_from_slice(digest);
    }
    payload.extend_from_slice(&(named.len() as u32).to_le_bytes());
    payload.extend_from_slice(MARK);
}

/// The digests listed after a call's bytes (none if no list).
pub(crate) fn listed(payload: &[u8]) -> impl Iterator<Item = [u8; 32]> + '_ {
    let list = (|| {
        let body = payload.strip_suffix(MARK.as_slice())?;
        let (rest, count) = body.split_at_checked(body.len().checked_sub(4)?)?;
        let count = u32::from_le_bytes(count.try_into().ok()?) as usize;
        let start = rest.len().checked_sub(count.checked_mul(32)?)?;
        Some(&rest[start..])
    })()
    .unwrap_or_default();
    list.chunks_exact(32).map(|c| c.try_into().expect("chunks of 32"))
}

/// Whether this node holds every value `payload` names.
pub(crate) fn all_held(payload: &[u8]) -> bool {
    listed(payload).all(|d| super::pins::holds_any(&d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_reads_back_and_no_list_reads_as_none() {
        let mut p = b"call bytes".to_vec();
        append(&mut p, &[]);
        assert_eq!(p, b"call bytes");
        assert_eq!(listed(&p).count(), 0);
        append(&mut p, &[[1; 32], [2; 32]]);
        assert_eq!(listed(&p).collect::<Vec<_>>(), vec![[1; 32], [2; 32]]);
        assert_eq!(listed(b"satin#nd").count(), 0, "too short for a count");
        let mut lying = b"x".to_vec();
        lying.extend_from_slice(&1000u32.to_le_bytes());
        lying.extend_from_slice(MARK);
        assert_eq!(listed(&lying).count(), 0, "a count past the start");
    }
}
