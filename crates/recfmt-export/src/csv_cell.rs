//! Number and boolean cells appended to the CSV buffer without a `memmove` call per cell.
//!
//! Most cells of a recording's CSV are a few bytes of formatted number. Appending each with
//! `extend_from_slice` costs a call into `memmove` for a variable-length copy. Integers are
//! written where they end up: a block of [`BLOCK`] bytes is appended, the digits are written
//! into it and the block is cut to their length. Floats are formatted by `zmij`, which finds
//! the same shortest round-trip digits as `ryu` (the text `arrow-csv` writes) in about two
//! thirds of the time, and copied with [`push_float_text`]: at most two fixed-size,
//! overlapping moves, and `1e+20` (`zmij`) made `1e20` (`ryu`).

/// Bytes appended before a number is written into them: at least the longest integer (20
/// digits) and the longest text [`push_short`] copies in fixed-size moves.
const BLOCK: usize = 32;

/// Two decimal digits per value below 100, `00` to `99`.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// The text of a float in `formatter`: `zmij`'s shortest round-trip text (`NaN`, `inf`,
/// `-inf` when not finite).
#[inline]
pub(crate) fn float_text(formatter: &mut zmij::Buffer, value: impl zmij::Float) -> &[u8] {
    formatter.format(value).as_bytes()
}

/// Appends a float's text from [`float_text`] as `ryu` writes it: `zmij` writes a positive
/// exponent with a sign (`1e+20`), `ryu` without (`1e20`).
#[inline]
pub(crate) fn push_float_text(buf: &mut Vec<u8>, text: &[u8]) {
    // The sign, when there is one, is among the last 5 bytes (`e+5` to `e+308`).
    let tail = text.len().saturating_sub(5);
    match text[tail..].iter().position(|&b| b == b'+') {
        None => push_short(buf, text),
        Some(at) => {
            let plus = tail + at;
            push_short(buf, &text[..plus]);
            push_short(buf, &text[plus + 1..]);
        }
    }
}

/// Longest text [`push_short`] copies in fixed-size moves.
const SHORT: usize = BLOCK;

/// Appends `text`: for up to [`SHORT`] bytes, a fixed block is appended, the text copied into
/// it with two overlapping moves of a size known at compile time, and the block cut to the
/// text's length.
#[inline]
fn push_short(buf: &mut Vec<u8>, text: &[u8]) {
    let len = text.len();
    if len > SHORT {
        buf.extend_from_slice(text);
        return;
    }
    let start = open_block(buf);
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

/// Appends `value` in decimal, with a `-` when negative.
#[inline]
pub(crate) fn push_i64(buf: &mut Vec<u8>, value: i64) {
    if value < 0 {
        buf.push(b'-');
    }
    push_u64(buf, value.unsigned_abs());
}

/// Appends `value` in decimal, written two digits at a time from the last.
#[inline]
pub(crate) fn push_u64(buf: &mut Vec<u8>, value: u64) {
    let len = decimal_digits(value);
    let start = open_block(buf);
    let digits = &mut buf[start..start + len];
    let mut rest = value;
    let mut end = len;
    while rest >= 100 {
        let pair = (rest % 100) as usize * 2;
        rest /= 100;
        digits[end - 2..end].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        end -= 2;
    }
    if rest >= 10 {
        let pair = rest as usize * 2;
        digits[end - 2..end].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        digits[end - 1] = b'0' + rest as u8;
    }
    buf.truncate(start + len);
}

/// Digits of `value` in decimal (1 for 0).
#[inline]
fn decimal_digits(value: u64) -> usize {
    value.checked_ilog10().map_or(1, |log| log as usize + 1)
}

/// Appends `true` or `false`.
#[inline]
pub(crate) fn push_bool(buf: &mut Vec<u8>, value: bool) {
    buf.extend_from_slice(if value { b"true" } else { b"false" });
}

/// Appends [`BLOCK`] zero bytes (a fixed-size store, no call) and returns where they start.
#[inline]
fn open_block(buf: &mut Vec<u8>) -> usize {
    let start = buf.len();
    buf.extend_from_slice(&[0u8; BLOCK]);
    start
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every float of a list through [`float_text`] and [`push_float_text`], and `ryu`.
    fn same_as_ryu<F: zmij::Float + ryu::Float + Copy + std::fmt::Debug>(values: &[F]) {
        let mut formatter = zmij::Buffer::new();
        let mut reference = ryu::Buffer::new();
        let mut buf = b"x,".to_vec();
        for &value in values {
            buf.truncate(2);
            push_float_text(&mut buf, float_text(&mut formatter, value));
            assert_eq!(&buf[2..], reference.format(value).as_bytes(), "{value:?}");
        }
    }

    fn f64s_as_ryu(values: &[f64]) {
        same_as_ryu(values);
    }

    fn f32s_as_ryu(values: &[f32]) {
        same_as_ryu(values);
    }

    /// All 2^32 `f32` bit patterns: minutes of CPU, so run by hand
    /// (`cargo test --release -p recfmt-export every_f32 -- --ignored`).
    #[test]
    #[ignore = "minutes of CPU"]
    fn every_f32_reads_as_ryu_writes_it() {
        let mut formatter = zmij::Buffer::new();
        let mut reference = ryu::Buffer::new();
        let mut buf = Vec::new();
        for bits in 0..=u32::MAX {
            let value = f32::from_bits(bits);
            buf.clear();
            push_float_text(&mut buf, float_text(&mut formatter, value));
            assert_eq!(buf, reference.format(value).as_bytes(), "{bits:#x}");
        }
    }

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
        f64s_as_ryu(&f64s);
        let mut f32s: Vec<f32> = f64s.iter().map(|&f| f as f32).collect();
        f32s.extend(f64s.iter().map(|f| f32::from_bits(f.to_bits() as u32)));
        f32s.extend((0..0x1_0000u32).map(f32::from_bits));
        f32s.extend((0x7f80_0000..0x7f80_0010u32).map(f32::from_bits));
        f32s.extend((-50..40).map(|e| 10f32.powi(e)));
        f32s_as_ryu(&f32s);
    }

    proptest::proptest! {
        #[test]
        fn any_float_bits_read_as_ryu_writes_them(bits in proptest::prelude::any::<u64>()) {
            f64s_as_ryu(&[f64::from_bits(bits)]);
            f32s_as_ryu(&[f32::from_bits(bits as u32), f32::from_bits((bits >> 32) as u32)]);
        }

        #[test]
        fn any_integer_reads_as_std_writes_it(value in proptest::prelude::any::<i64>()) {
            let mut buf = Vec::new();
            push_i64(&mut buf, value);
            proptest::prop_assert_eq!(buf.clone(), value.to_string().into_bytes());
            buf.clear();
            push_u64(&mut buf, value as u64);
            proptest::prop_assert_eq!(buf, (value as u64).to_string().into_bytes());
        }
    }

    #[test]
    fn integers_at_every_length_and_limit() {
        let mut values = vec![i64::MIN, i64::MAX, 0, -1, 1, 9, 10, 99, 100, -100];
        for digits in 1..19 {
            let p = 10i64.pow(digits);
            values.extend([p - 1, p, p + 1, -p + 1, -p, -p - 1]);
        }
        for value in values {
            let mut buf = b"x,".to_vec();
            push_i64(&mut buf, value);
            assert_eq!(&buf[2..], value.to_string().as_bytes());
        }
        let mut buf = Vec::new();
        push_u64(&mut buf, u64::MAX);
        assert_eq!(buf, b"18446744073709551615");
    }

    #[test]
    fn booleans() {
        let mut buf = Vec::new();
        push_bool(&mut buf, true);
        push_bool(&mut buf, false);
        assert_eq!(buf, b"truefalse");
    }
}
