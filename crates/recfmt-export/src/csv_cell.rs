//! Number and boolean cells appended to the CSV buffer without a `memmove` call per cell.
//!
//! Most cells of a recording's CSV are a few bytes of formatted number. Appending each with
//! `extend_from_slice` costs a call into `memmove` for a variable-length copy; here the text is
//! copied with at most two fixed-size, overlapping moves that compile to plain loads and
//! stores. Floats are formatted by `zmij`, which finds the same shortest round-trip digits as
//! `ryu` (the text `arrow-csv` writes) in about half the time; the one difference in layout,
//! `1e+20` where `ryu` writes `1e20`, is undone here.

/// Formatters kept across the cells of a batch.
pub(crate) struct NumberText {
    ints: itoa::Buffer,
    floats: zmij::Buffer,
}

impl NumberText {
    pub(crate) fn new() -> Self {
        NumberText {
            ints: itoa::Buffer::new(),
            floats: zmij::Buffer::new(),
        }
    }

    /// Appends `value` in decimal, as `itoa` writes it.
    #[inline]
    pub(crate) fn push_int(&mut self, buf: &mut Vec<u8>, value: impl itoa::Integer) {
        push_short(buf, self.ints.format(value).as_bytes());
    }

    /// Appends the shortest text that reads back as `value`, as `ryu` writes it (`0.1`, `1.0`,
    /// `1e20`, `1e-7`, `NaN`, `inf`, `-inf`).
    #[inline]
    pub(crate) fn push_float(&mut self, buf: &mut Vec<u8>, value: impl zmij::Float) {
        let text = self.floats.format(value).as_bytes();
        push_short(buf, text);
        // `zmij` writes a positive exponent with a sign; its last 5 bytes hold the `+`.
        let tail = text.len().saturating_sub(5);
        if let Some(plus) = text[tail..].iter().position(|&b| b == b'+') {
            let at = buf.len() - text.len() + tail + plus;
            buf.remove(at);
        }
    }
}

/// Longest text [`push_short`] copies in fixed-size moves; longer text is rare (numbers are at
/// most 24 bytes) and is appended as usual.
const SHORT: usize = 32;

/// Appends `text`: for up to [`SHORT`] bytes, a fixed block is appended and then cut to the
/// length, so the copy is two overlapping moves of a size known at compile time.
#[inline]
pub(crate) fn push_short(buf: &mut Vec<u8>, text: &[u8]) {
    let len = text.len();
    if len > SHORT {
        buf.extend_from_slice(text);
        return;
    }
    let start = buf.len();
    buf.extend_from_slice(&[0u8; SHORT]);
    let block = &mut buf[start..start + SHORT];
    if len >= 16 {
        block[..16].copy_from_slice(&text[..16]);
        block[len - 16..len].copy_from_slice(&text[len - 16..]);
    } else if len >= 8 {
        block[..8].copy_from_slice(&text[..8]);
        block[len - 8..len].copy_from_slice(&text[len - 8..]);
    } else if len >= 4 {
        block[..4].copy_from_slice(&text[..4]);
        block[len - 4..len].copy_from_slice(&text[len - 4..]);
    } else {
        block[..len].copy_from_slice(text);
    }
    buf.truncate(start + len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_of_every_length_is_appended_whole() {
        let source: Vec<u8> = (b'a'..=b'z').chain(b'A'..=b'Z').collect();
        for len in 0..=source.len() {
            let mut buf = b"x,".to_vec();
            push_short(&mut buf, &source[..len]);
            assert_eq!(&buf[..2], b"x,");
            assert_eq!(&buf[2..], &source[..len]);
        }
    }

    /// Every float of a kind through [`NumberText::push_float`] and `ryu`.
    fn same_as_ryu<F: zmij::Float + ryu::Float + Copy + std::fmt::Debug>(values: &[F]) {
        let mut text = NumberText::new();
        let mut reference = ryu::Buffer::new();
        let mut buf = Vec::new();
        for &value in values {
            buf.clear();
            text.push_float(&mut buf, value);
            assert_eq!(
                std::str::from_utf8(&buf).ok(),
                Some(reference.format(value)),
                "{value:?}"
            );
        }
    }

    #[test]
    fn floats_read_as_ryu_writes_them() {
        let mut f64s = vec![
            0.0,
            -0.0,
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            5e-324,
            -5e-324,
            1e15,
            1e16,
            1e17,
            1e21,
            1e22,
            1e100,
            1e300,
            1e-4,
            1e-5,
            1e-7,
            1e-300,
            0.1,
            0.30000000000000004,
            123456789.0,
            9007199254740993.0,
        ];
        // A cheap generator (xorshift) over all bit patterns, and every power of ten.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            f64s.push(f64::from_bits(state));
            f64s.push(f64::from(state as u32 as i32) / 1000.0);
        }
        f64s.extend((-330..310).map(|e| 10f64.powi(e)));
        same_as_ryu(&f64s);
        let mut f32s: Vec<f32> = f64s.iter().map(|&f| f as f32).collect();
        f32s.extend(f64s.iter().map(|f| f32::from_bits(f.to_bits() as u32)));
        f32s.extend((0..0x1_0000u32).map(f32::from_bits));
        f32s.extend((-50..40).map(|e| 10f32.powi(e)));
        same_as_ryu(&f32s);
    }

    proptest::proptest! {
        #[test]
        fn any_float_bits_read_as_ryu_writes_them(bits in proptest::prelude::any::<u64>()) {
            same_as_ryu(&[f64::from_bits(bits)]);
            same_as_ryu(&[f32::from_bits(bits as u32), f32::from_bits((bits >> 32) as u32)]);
        }

        #[test]
        fn any_integer_reads_as_itoa_writes_it(value in proptest::prelude::any::<i64>()) {
            let mut buf = Vec::new();
            NumberText::new().push_int(&mut buf, value);
            proptest::prop_assert_eq!(buf, value.to_string().into_bytes());
        }
    }

    /// All 2^32 `f32` bit patterns: minutes of CPU, so run by hand
    /// (`cargo test --release -p recfmt-export every_f32 -- --ignored`).
    #[test]
    #[ignore = "minutes of CPU"]
    fn every_f32_reads_as_ryu_writes_it() {
        let mut text = NumberText::new();
        let mut reference = ryu::Buffer::new();
        let mut buf = Vec::new();
        for bits in 0..=u32::MAX {
            let value = f32::from_bits(bits);
            buf.clear();
            text.push_float(&mut buf, value);
            assert_eq!(buf, reference.format(value).as_bytes(), "{bits:#x}");
        }
    }

    #[test]
    fn integers_at_the_limits() {
        let mut text = NumberText::new();
        let mut buf = Vec::new();
        text.push_int(&mut buf, i64::MIN);
        buf.push(b',');
        text.push_int(&mut buf, u64::MAX);
        buf.push(b',');
        text.push_int(&mut buf, 0u8);
        buf.push(b',');
        text.push_int(&mut buf, -7i8);
        assert_eq!(buf, b"-9223372036854775808,18446744073709551615,0,-7");
    }
}
