//! The numbers of the trace format and of the heap profile: LEB128 varints
//! (`uv`) and zig-zag signed values (`sv`), as `docs/trace-format.md`
//! defines them. The one Rust definition; the C writers (`mv_main.c`,
//! `mv_heap.c`) follow the same document.

/// Why a varint could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarintError {
    /// The buffer ends inside the number: read more and try again.
    Short,
    /// More than 10 bytes, or a value above 2^64 - 1: corrupt data.
    Overlong,
}

/// Appends `v` as a LEB128 varint (1 to 10 bytes).
pub fn put_uv(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends `v` zig-zag encoded, so that small magnitudes of either sign
/// take few bytes.
pub fn put_sv(out: &mut Vec<u8>, v: i64) {
    put_uv(out, zigzag(v));
}

/// `(v << 1) ^ (v >> 63)`: 0, -1, 1, -2 … become 0, 1, 2, 3 …
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag`].
pub fn unzigzag(u: u64) -> i64 {
    ((u >> 1) as i64) ^ -((u & 1) as i64)
}

/// Decodes the varint at `pos`; returns it and the position after it.
/// One- and two-byte numbers (almost every number of a trace) take the
/// short path.
#[inline(always)]
pub fn get_uv(buf: &[u8], pos: usize) -> Result<(u64, usize), VarintError> {
    let b = *buf.get(pos).ok_or(VarintError::Short)?;
    if b < 0x80 {
        return Ok((b as u64, pos + 1));
    }
    let b1 = *buf.get(pos + 1).ok_or(VarintError::Short)?;
    if b1 < 0x80 {
        return Ok((((b & 0x7f) as u64) | ((b1 as u64) << 7), pos + 2));
    }
    get_uv_long(buf, pos)
}

/// [`get_uv`] for numbers of three bytes or more.
#[inline(never)]
fn get_uv_long(buf: &[u8], pos: usize) -> Result<(u64, usize), VarintError> {
    let mut v = 0u64;
    let mut p = pos;
    for shift in (0..64).step_by(7) {
        let b = *buf.get(p).ok_or(VarintError::Short)?;
        p += 1;
        if shift == 63 && b > 1 {
            return Err(VarintError::Overlong);
        }
        v |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            return Ok((v, p));
        }
    }
    Err(VarintError::Overlong)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn edges_round_trip_and_bad_input_is_told_apart() {
        for v in [0, 1, 127, 128, 16383, 16384, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put_uv(&mut b, v);
            assert_eq!(get_uv(&b, 0), Ok((v, b.len())));
            assert_eq!(get_uv(&b[..b.len() - 1], 0), Err(VarintError::Short));
        }
        assert_eq!(get_uv(&[0xff; 10], 0), Err(VarintError::Overlong));
        let mut too_big = vec![0xff; 9];
        too_big.push(0x02);
        assert_eq!(get_uv(&too_big, 0), Err(VarintError::Overlong));
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
        assert_eq!(unzigzag(zigzag(i64::MIN)), i64::MIN);
    }

    proptest! {
        #[test]
        fn any_value_round_trips(v in any::<u64>(), s in any::<i64>(), at in 0usize..4) {
            let mut b = vec![0x80; at];
            put_uv(&mut b, v);
            put_sv(&mut b, s);
            let (got, p) = get_uv(&b, at).unwrap();
            prop_assert_eq!(got, v);
            let (z, end) = get_uv(&b, p).unwrap();
            prop_assert_eq!(unzigzag(z), s);
            prop_assert_eq!(end, b.len());
        }
    }
}
