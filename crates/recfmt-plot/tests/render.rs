//! Pictures checked as a person would look at them: the PNG has the asked size, a known sine
//! lies where its values put it, a short spike in a long series survives the reduction, and
//! the SVG's axis text names the signal and its unit.

#![allow(clippy::unwrap_used)] // tests may unwrap

use recfmt_core::{
    DType, Header, MemoryRecording, Schema, SignalDesc, StreamDesc, TimeBase, Value,
};
use recfmt_plot::{Figure, ImageKind, SignalOptions};

/// A recording held in memory: one stream `NAV` of (`t` seconds, `x` metres) rows.
fn memory(rows: Vec<(f64, f64)>) -> Box<MemoryRecording> {
    let mut nav = StreamDesc::new(
        "NAV",
        SignalDesc::scalar("t", DType::F64),
        TimeBase::SECONDS,
    );
    nav.signals
        .push(SignalDesc::scalar("x", DType::F64).with_unit("m"));
    let header = Header {
        format: "memory",
        ..Header::default()
    };
    let rows = rows
        .into_iter()
        .map(|(t, x)| (0, vec![Value::Float(t), Value::Float(x)]));
    Box::new(MemoryRecording::new(header, Schema { streams: vec![nav] }).with_rows(rows))
}

fn figure(rows: Vec<(f64, f64)>) -> Figure {
    let options = SignalOptions {
        title: "sine test".into(),
        ..Default::default()
    };
    recfmt_plot::plot_signals(memory(rows), &options).unwrap()
}

/// Decodes a PNG into (width, height, RGB pixels).
fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(png_bytes);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

/// Pixels of exactly the first series colour.
fn series_pixels(width: u32, height: u32, rgb: &[u8]) -> Vec<(i64, i64)> {
    let (r, g, b) = recfmt_plot::series_color(0);
    let mut out = Vec::new();
    for y in 0..height {
        for x in 0..width {
            let i = (y * width + x) as usize * 3;
            if rgb[i..i + 3] == [r, g, b] {
                out.push((i64::from(x), i64::from(y)));
            }
        }
    }
    out
}

/// The text of every `<text>` element, trimmed and unescaped.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..t.find("</text>")?];
            Some(
                body.trim()
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&amp;", "&"),
            )
        })
        .collect()
}

#[test]
fn a_known_sine_lies_where_its_values_put_it() {
    // One period of 3 m amplitude over 10 s, sampled at 1 kHz.
    let rows: Vec<(f64, f64)> = (0..=10_000)
        .map(|i| {
            let t = f64::from(i) * 1e-3;
            (t, 3.0 * (std::f64::consts::TAU * t / 10.0).sin())
        })
        .collect();
    let png_bytes = figure(rows).render(ImageKind::Png, 800, Some(400)).unwrap();
    let (w, h, rgb) = decode(&png_bytes);
    assert_eq!((w, h), (800, 400));

    let pixels = series_pixels(w, h, &rgb);
    assert!(pixels.len() > 500, "only {} line pixels", pixels.len());
    let (x0, x1) = (
        pixels.iter().map(|p| p.0).min().unwrap(),
        pixels.iter().map(|p| p.0).max().unwrap(),
    );
    let (top, bottom) = (
        pixels.iter().map(|p| p.1).min().unwrap(),
        pixels.iter().map(|p| p.1).max().unwrap(),
    );
    // The line spans most of the plot: 10 s across, 6 m up.
    assert!(x1 - x0 > 600, "{x0}..{x1}");
    assert!(bottom - top > 250, "{top}..{bottom}");
    // The peak (t = 2.5 s) is a quarter of the way across, the trough three quarters.
    let at = |row: i64| {
        let xs: Vec<i64> = pixels.iter().filter(|p| p.1 == row).map(|p| p.0).collect();
        xs.iter().sum::<i64>() as f64 / xs.len() as f64
    };
    let quarter = x0 as f64 + (x1 - x0) as f64 * 0.25;
    let three_quarters = x0 as f64 + (x1 - x0) as f64 * 0.75;
    assert!((at(top) - quarter).abs() < 4.0, "peak at x={}", at(top));
    assert!(
        (at(bottom) - three_quarters).abs() < 4.0,
        "trough at x={}",
        at(bottom)
    );
    // Every line pixel is on the curve, and every column has the curve.
    let expected = |x: i64| {
        let t = (x - x0) as f64 / (x1 - x0) as f64 * 10.0;
        let v = 3.0 * (std::f64::consts::TAU * t / 10.0).sin();
        top as f64 + (3.0 - v) / 6.0 * (bottom - top) as f64
    };
    for &(x, y) in &pixels {
        assert!(
            (y as f64 - expected(x)).abs() <= 3.0,
            "pixel ({x}, {y}) is off the curve (expected y {:.1})",
            expected(x)
        );
    }
    for x in x0..=x1 {
        assert!(
            pixels
                .iter()
                .any(|&(px, py)| px == x && (py as f64 - expected(x)).abs() <= 3.0),
            "column {x} has no line pixel near y {:.1}",
            expected(x)
        );
    }
}

#[test]
fn a_short_spike_in_a_long_series_is_drawn() {
    // Two million flat points and one spike: the reduction keeps every extreme.
    let mut rows: Vec<(f64, f64)> = (0..2_000_000).map(|i| (f64::from(i) * 1e-4, 0.0)).collect();
    rows[1_234_567].1 = 10.0;
    let png_bytes = figure(rows).render(ImageKind::Png, 600, Some(300)).unwrap();
    let (w, h, rgb) = decode(&png_bytes);
    let pixels = series_pixels(w, h, &rgb);
    let top = pixels.iter().map(|p| p.1).min().unwrap();
    let bottom = pixels.iter().map(|p| p.1).max().unwrap();
    assert!(
        bottom - top > 150,
        "the spike is missing: rows {top}..{bottom}"
    );
    let (x0, x1) = (
        pixels.iter().map(|p| p.0).min().unwrap(),
        pixels.iter().map(|p| p.0).max().unwrap(),
    );
    let spike_x = pixels.iter().find(|p| p.1 == top).unwrap().0;
    let expected = x0 as f64 + (x1 - x0) as f64 * (123.4567 / 199.9999);
    assert!(
        (spike_x as f64 - expected).abs() <= 2.0,
        "spike at {spike_x}, expected {expected:.1}"
    );
}

#[test]
fn svg_axis_text_names_the_signal_and_unit() {
    let rows = (0..100)
        .map(|i| (f64::from(i), f64::from(i).sin()))
        .collect();
    let svg =
        String::from_utf8(figure(rows).render(ImageKind::Svg, 640, Some(320)).unwrap()).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
    assert!(svg.contains(r#"width="640""#) && svg.contains(r#"height="320""#));
    let texts = svg_texts(&svg);
    assert!(
        texts.iter().any(|t| t == "NAV.x [m]"),
        "no y axis text in {texts:?}"
    );
    assert!(texts.iter().any(|t| t == "time [s]"), "no x axis text");
    assert!(texts.iter().any(|t| t == "sine test"), "no title");
}

#[test]
fn the_overview_shows_each_stream_and_where_a_truncated_file_ends() {
    let mut cut = recfmt_core::Integrity::default();
    cut.truncate(4096, 17);
    let reader = memory((0..500).map(|i| (f64::from(i) * 0.01, 0.0)).collect());
    let mut reader = Box::new(reader.with_integrity(cut));
    let figure = recfmt_plot::overview(reader.as_mut(), "cut").unwrap();
    let svg = String::from_utf8(figure.render(ImageKind::Svg, 800, None).unwrap()).unwrap();
    let texts = svg_texts(&svg);
    assert!(
        texts.iter().any(|t| t == "NAV: 500 rows, 100.000 Hz"),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t == "file ends: truncated at byte 4096")
    );
    assert!(
        texts
            .iter()
            .any(|t| t == "cut: 1 streams, truncated, 17 bytes lost")
    );
    let (w, h, _) = decode(&figure.render(ImageKind::Png, 800, Some(240)).unwrap());
    assert_eq!((w, h), (800, 240));
}

#[test]
fn outputs_must_be_svg_or_png_and_sizes_sane() {
    assert!(ImageKind::from_path(std::path::Path::new("a.jpg")).is_err());
    assert_eq!(
        ImageKind::from_path(std::path::Path::new("A.PNG")).unwrap(),
        ImageKind::Png
    );
    let rows = (0..10).map(|i| (f64::from(i), 1.0)).collect();
    assert!(figure(rows).render(ImageKind::Png, 10, Some(10)).is_err());
}
