//! C `printf` number formatting, as `std::ostream` produces it with the C locale.
//!
//! Rust's exact-precision float formatting (`{:.N}` and `{:.Ne}`) rounds the exact binary
//! value to nearest with ties to even, like glibc's `printf`, so the helpers build on it.

/// `printf("%.{precision}g", x)`: what `ostream << double` prints with the default flags
/// (precision 6).
///
/// ```
/// use recfmt_carla::query::format_g;
/// assert_eq!(format_g(0.05, 6), "0.05");
/// assert_eq!(format_g(-17219.7, 6), "-17219.7");
/// assert_eq!(format_g(1234567.0, 6), "1.23457e+06");
/// assert_eq!(format_g(0.0001, 6), "0.0001");
/// assert_eq!(format_g(0.00001, 6), "1e-05");
/// assert_eq!(format_g(f64::NAN, 6), "nan");
/// ```
pub fn format_g(x: f64, precision: usize) -> String {
    let mut s = Vec::new();
    push_g(&mut s, x, precision);
    String::from_utf8_lossy(&s).into_owned()
}

/// Appends `printf("%.{precision}g", x)` to `out`.
pub(crate) fn push_g(out: &mut Vec<u8>, x: f64, precision: usize) {
    use std::io::Write as _;
    if !x.is_finite() {
        push_special(out, x);
        return;
    }
    let p = precision.max(1);
    if x == 0.0 {
        out.extend_from_slice(if x.is_sign_negative() { b"-0" } else { b"0" });
        return;
    }
    // The exponent of the value rounded to `p` significant digits decides the style.
    let sci = format!("{:.*e}", p - 1, x);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i64 {
        out.extend_from_slice(strip_zeros(mantissa).as_bytes());
        let _ = write!(
            out,
            "e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.unsigned_abs()
        );
    } else {
        let decimals = usize::try_from(p as i64 - 1 - exp).unwrap_or(0);
        let fixed = format!("{x:.decimals$}");
        out.extend_from_slice(strip_zeros(&fixed).as_bytes());
    }
}

/// `printf("%.{precision}f", x)`.
///
/// ```
/// use recfmt_carla::query::format_f;
/// assert_eq!(format_f(0.5, 0), "0");
/// assert_eq!(format_f(1.5, 0), "2");
/// assert_eq!(format_f(2.5, 0), "2");
/// assert_eq!(format_f(-0.25, 0), "-0");
/// ```
pub fn format_f(x: f64, precision: usize) -> String {
    if !x.is_finite() {
        let mut s = Vec::new();
        push_special(&mut s, x);
        return String::from_utf8_lossy(&s).into_owned();
    }
    format!("{x:.precision$}")
}

/// glibc's text for infinities and NaNs (the sign of a NaN is printed).
fn push_special(out: &mut Vec<u8>, x: f64) {
    if x.is_sign_negative() {
        out.push(b'-');
    }
    out.extend_from_slice(if x.is_nan() { b"nan" } else { b"inf" });
}

/// Removes trailing zeros after a decimal point, and the point itself when nothing follows.
fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Appends `s` padded with spaces to `width` columns (bytes, as `std::setw` counts),
/// on the left (`right == true`) or on the right.
pub(crate) fn push_padded(out: &mut Vec<u8>, s: &[u8], width: usize, right: bool) {
    let pad = width.saturating_sub(s.len());
    if right {
        out.extend(std::iter::repeat_n(b' ', pad));
        out.extend_from_slice(s);
    } else {
        out.extend_from_slice(s);
        out.extend(std::iter::repeat_n(b' ', pad));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected values printed by glibc 2.36 `printf("%g")` / `printf("%.0f")`.
    #[test]
    fn matches_glibc_g() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "-0"),
            (1.0, "1"),
            (0.5, "0.5"),
            (100.0, "100"),
            (123456.0, "123456"),
            (123456.5, "123456"),
            (123457.5, "123458"),
            (999999.5, "1e+06"),
            (1e6, "1e+06"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00012345678, "0.000123457"),
            (0.00001, "1e-05"),
            (9.99999e-5, "9.99999e-05"),
            (9.999995e-5, "0.0001"),
            (1e100, "1e+100"),
            (1e-300, "1e-300"),
            (-17219.7, "-17219.7"),
            (f64::from(0.1f32), "0.1"),
            (f64::from(33.3f32), "33.3"),
            (f64::from(-7.450_581e-9_f32), "-7.45058e-09"),
            (f64::from(89.99f32), "89.99"),
            (f64::from(16777217.0f32), "1.67772e+07"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (-f64::NAN, "-nan"),
            (2.5e-5, "2.5e-05"),
            (0.05, "0.05"),
            (41.7499999, "41.75"),
            (5e-324, "4.94066e-324"),
            (f64::MAX, "1.79769e+308"),
        ];
        for &(x, want) in cases {
            assert_eq!(format_g(x, 6), want, "{x:e}");
        }
        assert_eq!(format_g(1234.5678, 2), "1.2e+03");
        assert_eq!(format_g(0.5, 0), "0.5");
        assert_eq!(format_g(2.5, 1), "2");
    }

    #[test]
    fn matches_glibc_fixed0() {
        let cases: &[(f64, &str)] = &[
            (0.5, "0"),
            (1.5, "2"),
            (2.5, "2"),
            (3.5, "4"),
            (-0.5, "-0"),
            (-2.5, "-2"),
            (0.5000000000000001, "1"),
            (46.4, "46"),
            (41.74999, "42"),
            (1e21, "1000000000000000000000"),
            (-1.0, "-1"),
            (f64::NAN, "nan"),
        ];
        for &(x, want) in cases {
            assert_eq!(format_f(x, 0), want, "{x:e}");
        }
    }

    #[test]
    fn padding() {
        let mut v = Vec::new();
        push_padded(&mut v, b"Id", 6, true);
        push_padded(&mut v, b"Actor", 8, false);
        push_padded(&mut v, b"toolongvalue", 4, true);
        assert_eq!(v, b"    IdActor   toolongvalue");
    }
}
