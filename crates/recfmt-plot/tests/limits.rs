//! Figures at the edges: values and times whose span does not fit a double (refused, never
//! spinning in plotters' key points), a span of a few ulps, thousands of streams or signals
//! (memory and notes stay small), and series named by their stream.

#![allow(clippy::unwrap_used)] // tests may unwrap

use recfmt_core::{
    DType, Header, MemoryRecording, Schema, SignalDesc, StreamDesc, TimeBase, Value,
};
use recfmt_plot::{Figure, ImageKind, MAX_SERIES, MapTrack, Panels, SignalOptions, TrackMap};
use recfmt_select::{Pattern, TimeBound, TimeRange};

/// A stream `name` of `t` seconds and `signals` f64 signals (`v0`, `v1`, ...) in metres.
fn stream(name: &str, signals: usize) -> StreamDesc {
    let mut desc = StreamDesc::new(name, SignalDesc::scalar("t", DType::F64), TimeBase::SECONDS);
    for i in 0..signals {
        desc.signals
            .push(SignalDesc::scalar(format!("v{i}"), DType::F64).with_unit("m"));
    }
    desc
}

/// A recording of `streams` with `rows` of (stream, values).
fn recording(streams: Vec<StreamDesc>, rows: Vec<(usize, Vec<f64>)>) -> Box<MemoryRecording> {
    let header = Header {
        format: "memory",
        ..Header::default()
    };
    let rows = rows
        .into_iter()
        .map(|(s, v)| (s, v.into_iter().map(Value::Float).collect()));
    Box::new(MemoryRecording::new(header, Schema { streams }).with_rows(rows))
}

/// One stream `S` of one signal with these (t, v) rows.
fn series(rows: &[(f64, f64)]) -> Box<MemoryRecording> {
    recording(
        vec![stream("S", 1)],
        rows.iter().map(|&(t, v)| (0, vec![t, v])).collect(),
    )
}

fn plot(reader: Box<MemoryRecording>, options: SignalOptions) -> Figure {
    recfmt_plot::plot_signals(reader, &options).unwrap()
}

fn render_error(figure: &Figure) -> String {
    let svg = figure.render(ImageKind::Svg, 600, Some(300));
    let png = figure.render(ImageKind::Png, 600, Some(300));
    assert!(png.is_err(), "the PNG of the same figure was drawn");
    svg.unwrap_err().to_string()
}

fn texts(figure: &Figure) -> Vec<String> {
    let svg = String::from_utf8(figure.render(ImageKind::Svg, 800, Some(400)).unwrap()).unwrap();
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t[t.find('>')? + 1..t.find("</text>")?].trim().to_owned()))
        .collect()
}

#[test]
fn values_spanning_more_than_a_double_are_refused() {
    let figure = plot(
        series(&[(0.0, 1e308), (1.0, -1e308)]),
        SignalOptions::default(),
    );
    let e = render_error(&figure);
    assert!(
        e.contains("panel \"unit: m\": values from -1e308 to 1e308"),
        "{e}"
    );
    assert!(e.contains("no axis can show them"), "{e}");
}

#[test]
fn a_constant_of_the_largest_double_is_drawn() {
    let figure = plot(
        series(&[(0.0, f64::MAX), (1.0, f64::MAX)]),
        SignalOptions::default(),
    );
    figure.render(ImageKind::Svg, 600, Some(300)).unwrap();
    figure.render(ImageKind::Png, 600, Some(300)).unwrap();
    let lowest = plot(
        series(&[(0.0, f64::MIN), (1.0, f64::MIN)]),
        SignalOptions::default(),
    );
    lowest.render(ImageKind::Svg, 600, Some(300)).unwrap();
}

#[test]
fn values_a_few_ulps_apart_are_drawn() {
    // 1e17 and the next doubles: a span of 16 to 32 is under 1e-15 of the values.
    let figure = plot(
        series(&[(0.0, 1e17), (1.0, 1e17 + 16.0), (2.0, 1e17 + 32.0)]),
        SignalOptions::default(),
    );
    figure.render(ImageKind::Svg, 600, Some(300)).unwrap();
    let times = plot(
        series(&[(1e17, 1.0), (1e17 + 16.0, 2.0)]),
        SignalOptions::default(),
    );
    times.render(ImageKind::Png, 600, Some(300)).unwrap();
}

#[test]
fn a_time_range_wider_than_a_double_is_refused() {
    let options = SignalOptions {
        range: TimeRange {
            start: Some(TimeBound::Absolute(-1e308)),
            end: Some(TimeBound::Absolute(1e308)),
            carry_last: false,
        },
        ..SignalOptions::default()
    };
    let figure = plot(series(&[(0.0, 1.0), (1.0, 2.0)]), options);
    let e = render_error(&figure);
    assert!(
        e.contains("the time range asked for (--start, --end): times from -1e308 to 1e308"),
        "{e}"
    );
}

#[test]
fn an_overview_of_times_wider_than_a_double_is_refused() {
    let mut reader = series(&[(-1.7e308, 0.0), (0.0, 0.0), (1.7e308, 0.0)]);
    let figure = recfmt_plot::overview(reader.as_mut(), "wide").unwrap();
    let e = render_error(&figure);
    assert!(e.contains("row times from -1.7e308 to 1.7e308"), "{e}");
}

fn map(points: &[(f64, f64)]) -> Figure {
    let mut track = MapTrack::new("id 1");
    for (i, &(x, y)) in points.iter().enumerate() {
        track.push(i as f64, x, y, Some(1.0));
    }
    Figure::Map(TrackMap {
        title: "map".into(),
        x_label: "x [m]".into(),
        y_label: "y [m]".into(),
        tracks: vec![track],
        profile: true,
        altitude_label: "altitude [m]".into(),
        geographic: false,
    })
}

#[test]
fn maps_keep_finite_axes() {
    let e = render_error(&map(&[(-1e308, 0.0), (1e308, 1.0)]));
    assert!(e.contains("x [m] from -1e308 to 1e308"), "{e}");
    // Equal scales on both axes would need a y span beyond a double: drawn unequal instead.
    map(&[(-1e307, 0.0), (1e307, 1.0)])
        .render(ImageKind::Png, 600, Some(600))
        .unwrap();
    map(&[(0.0, -1e307), (1.0, 1e307)])
        .render(ImageKind::Svg, 600, Some(600))
        .unwrap();
}

#[test]
fn signals_beyond_the_line_limit_make_one_note() {
    let signals = MAX_SERIES + 1000;
    let row: Vec<f64> = (0..=signals).map(|i| i as f64).collect();
    let figure = plot(
        recording(vec![stream("S", signals)], vec![(0, row.clone()), (0, row)]),
        SignalOptions::default(),
    );
    let Figure::Signals(p) = &figure else {
        panic!("not a signal plot")
    };
    assert_eq!(p.notes.len(), 1, "{:?}", &p.notes[..p.notes.len().min(3)]);
    assert_eq!(
        p.notes[0],
        format!(
            "S.v{MAX_SERIES}, S.v{}, S.v{}, S.v{}, S.v{} and 995 more: not drawn, more than {MAX_SERIES} lines already (2000 values left out); choose fewer with --signal",
            MAX_SERIES + 1,
            MAX_SERIES + 2,
            MAX_SERIES + 3,
            MAX_SERIES + 4,
        )
    );
    // One signal left out keeps the note it always had.
    let row: Vec<f64> = (0..=MAX_SERIES + 1).map(|i| i as f64).collect();
    let figure = plot(
        recording(vec![stream("S", MAX_SERIES + 1)], vec![(0, row)]),
        SignalOptions::default(),
    );
    let Figure::Signals(p) = &figure else {
        panic!("not a signal plot")
    };
    assert_eq!(
        p.notes,
        vec![format!(
            "S.v{MAX_SERIES}: not drawn, more than {MAX_SERIES} lines already (1 values left out); choose fewer with --signal"
        )]
    );
}

#[test]
fn series_are_named_with_their_stream() {
    let two = || {
        recording(
            vec![stream("A", 1), stream("B", 1)],
            vec![
                (0, vec![0.0, 1.0]),
                (0, vec![1.0, 2.0]),
                (1, vec![0.5, 3.0]),
            ],
        )
    };
    // A lone signal: its axis names the stream too.
    let options = SignalOptions {
        signals: vec![Pattern::parse("A.v0").unwrap()],
        ..SignalOptions::default()
    };
    let t = texts(&plot(two(), options));
    assert!(t.iter().any(|t| t == "A.v0 [m]"), "{t:?}");
    // Two streams' signals of one name share the panel of their unit: both named in full.
    let t = texts(&plot(two(), SignalOptions::default()));
    assert!(t.iter().any(|t| t == "A.v0, B.v0 [m]"), "{t:?}");
    // A panel per stream is captioned with the stream; its axis keeps the short name.
    let options = SignalOptions {
        panels: Panels::Stream,
        ..SignalOptions::default()
    };
    let t = texts(&plot(two(), options));
    assert!(t.iter().any(|t| t == "v0 [m]"), "{t:?}");
    assert!(
        t.iter().any(|t| t == "A") && t.iter().any(|t| t == "B"),
        "{t:?}"
    );
}
