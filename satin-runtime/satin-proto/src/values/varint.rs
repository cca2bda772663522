//! LEB128 varints of `u64` without a branch per byte.
//!
//! The byte-at-a-time loop costs little per byte but mispredicts where it
//! stops: random 64-bit numbers take 9 or 10 bytes at even odds, and the
//! loop's exit costs more than the encoding. Here the length comes from
//! the leading zeros, the 7-bit groups are spread into (or gathered from)
//! a machine word with shifts and masks, and the bytes are stored (or
//! loaded) as words.

/// Spreads the low 56 bits of `v` into the low 7 bits of 8 bytes.
#[inline(always)]
fn spread(v: u64) -> u64 {
    let mut out = 0;
    let mut i = 0;
    while i < 8 {
        out |= ((v >> (7 * i)) & 0x7f) << (8 * i);
        i += 1;
    }
    out
}

/// Gathers the low 7 bits of 8 bytes into 56 bits.
#[inline(always)]
fn gather(w: u64) -> u64 {
    let mut out = 0;
    let mut i = 0;
    while i < 8 {
        out |= ((w >> (8 * i)) & 0x7f) << (7 * i);
        i += 1;
    }
    out
}

/// Bytes of a varint by the number of significant bits (0 to 64).
const LEN_BY_BITS: [u8; 65] = {
    let mut t = [1u8; 65];
    let mut bits = 1;
    while bits <= 64 {
        t[bits] = bits.div_ceil(7) as u8;
        bits += 1;
    }
    t
};

/// How many bytes `v`'s varint takes (1 to 10).
#[inline(always)]
pub(super) fn len(v: u64) -> usize {
    LEN_BY_BITS[64 - v.leading_zeros() as usize] as usize
}

/// `v`'s varint in 16 bytes (the first `len(v)` count), and its length.
#[inline(always)]
pub(super) fn encode(v: u64) -> ([u8; 16], usize) {
    let n = len(v);
    // The continuation bit on every byte but the last.
    let cont = 0x8080_8080_8080_8080u64 & u64::MAX.checked_shr(64 - 8 * (n as u32 - 1).min(8)).unwrap_or(0);
    let lo = spread(v) | cont;
    let high = v >> 56;
    let hi = (high & 0x7f) | ((high >> 7) << 8) | (((n > 9) as u64) << 7);
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&lo.to_le_bytes());
    out[8..].copy_from_slice(&hi.to_le_bytes());
    (out, n)
}

/// The varint at the start of `b` (16 bytes at least are readable),
/// `Some((value, length))`, or `None` if it has no end within 10 bytes or
/// its tenth byte has bits beyond 64 (postcard's rules for a `u64`).
#[inline(always)]
pub(super) fn decode(b: &[u8; 16]) -> Option<(u64, usize)> {
    let lo = u64::from_le_bytes(b[..8].try_into().expect("eight bytes"));
    let ends = !lo & 0x8080_8080_8080_8080;
    if ends != 0 {
        let n = ends.trailing_zeros() as usize / 8 + 1;
        let kept = if n == 8 { lo } else { lo & ((1u64 << (8 * n)) - 1) };
        return Some((gather(kept), n));
    }
    let (b8, b9) = (b[8], b[9]);
    let low = gather(lo);
    if b8 & 0x80 == 0 {
        return Some((low | (u64::from(b8) << 56), 9));
    }
    if b9 & 0x80 == 0 && b9 <= 1 {
        return Some((low | (u64::from(b8 & 0x7f) << 56) | (u64::from(b9) << 63), 10));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn plain(mut v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
        out
    }

    fn check(v: u64) {
        let (bytes, n) = encode(v);
        assert_eq!(&bytes[..n], &plain(v)[..], "{v:#x}");
        let mut padded = [0xffu8; 16];
        padded[..n].copy_from_slice(&bytes[..n]);
        assert_eq!(decode(&padded), Some((v, n)), "{v:#x}");
    }

    #[test]
    fn every_length_and_boundary_matches_the_byte_loop() {
        check(0);
        for shift in 0..64 {
            let p = 1u64 << shift;
            for v in [p - 1, p, p + 1, p | (p >> 1), u64::MAX >> (63 - shift)] {
                check(v);
            }
        }
        check(u64::MAX);
    }

    #[test]
    fn no_end_or_bits_beyond_64_are_refused() {
        assert_eq!(decode(&[0xff; 16]), None);
        let mut too_big = [0xffu8; 16];
        too_big[9] = 0x02;
        assert_eq!(decode(&too_big), None);
        too_big[9] = 0x01;
        assert_eq!(decode(&too_big), Some((u64::MAX, 10)));
    }

    proptest! {
        #[test]
        fn random_numbers_match_the_byte_loop(v in any::<u64>(), shift in 0u32..64) {
            check(v);
            check(v >> shift);
        }
    }
}
