//! `recfmt plot` on every sample and generated fixture, looked at as a person would: the PNG
//! decodes to the asked size and shows lines, the SVG names every stream (overview) or the
//! chosen signal and its unit (axis text).

use std::path::{Path, PathBuf};

use recfmt_tests::{assert_success, fixture, recfmt, samples};

/// Every recording to draw: the upstream samples and the generated fixtures.
fn recordings() -> Vec<PathBuf> {
    let mut all = Vec::new();
    all.extend(samples("carla", "log"));
    all.extend(samples("fgtape", "fgtape"));
    all.extend(samples("nanover/server-py", "traj"));
    all.extend(samples("nanover/converted", "zip"));
    all.push(fixture("usvlog/all_types"));
    all.push(fixture("icarec/all_types.icarec"));
    all
}

fn info(path: &Path) -> serde_json::Value {
    let out = recfmt(&["info", "--json", path.to_str().unwrap()]);
    assert_success(&out, "recfmt");
    serde_json::from_slice(&out.stdout).unwrap()
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
                    .replace("&quot;", "\"")
                    .replace("&amp;", "&"),
            )
        })
        .collect()
}

/// Width, height and how many pixels have the colour of the first line.
fn png_facts(path: &Path) -> (u32, u32, usize) {
    let bytes = std::fs::read(path).unwrap();
    let decoder = png::Decoder::new(&bytes[..]);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let (r, g, b) = recfmt::plot::series_color(0);
    let first_colour = buf[..info.buffer_size()]
        .chunks_exact(3)
        .filter(|p| *p == [r, g, b])
        .count();
    (info.width, info.height, first_colour)
}

fn plot(args: &[&str]) {
    let out = recfmt(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "recfmt {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The first scalar numeric signal of a stream with rows (not the time column), preferring
/// one with a unit: `(stream, signal, unit)`.
fn chosen_signal(info: &serde_json::Value) -> Option<(String, String, Option<String>)> {
    let mut candidates = Vec::new();
    for stream in info["streams"].as_array()? {
        if stream["rows"].as_u64() == Some(0) {
            continue;
        }
        for sig in stream["signals"].as_array()? {
            let numeric = !matches!(sig["dtype"].as_str(), Some("str" | "bytes" | "bool"));
            if numeric && sig["shape"].is_null() && sig["name"] != stream["time_column"] {
                candidates.push((
                    stream["name"].as_str()?.to_owned(),
                    sig["name"].as_str()?.to_owned(),
                    sig["unit"].as_str().map(str::to_owned),
                ));
            }
        }
    }
    let with_unit = candidates.iter().position(|c| c.2.is_some());
    with_unit
        .or((!candidates.is_empty()).then_some(0))
        .map(|i| candidates.swap_remove(i))
}

#[test]
fn every_recording_gets_an_overview_and_a_signal_plot_in_png_and_svg() {
    let work = tempfile::tempdir().unwrap();
    let recordings = recordings();
    assert!(recordings.len() >= 2);
    for (n, recording) in recordings.iter().enumerate() {
        let path = recording.to_str().unwrap();
        let info = info(recording);
        let streams = info["streams"].as_array().unwrap();

        // Overview: PNG at the asked size with bars drawn; SVG names every stream with its rows.
        let png = work.path().join(format!("{n}-overview.png"));
        plot(&[
            "plot",
            path,
            "--width",
            "900",
            "--height",
            "500",
            "-o",
            png.to_str().unwrap(),
        ]);
        let (w, h, first) = png_facts(&png);
        assert_eq!((w, h), (900, 500), "{path}");
        if streams[0]["rows"].as_u64().unwrap_or(0) > 0 {
            assert!(first > 0, "{path}: the first stream's bars are missing");
        }
        let svg = work.path().join(format!("{n}-overview.svg"));
        plot(&["plot", path, "-o", svg.to_str().unwrap()]);
        let texts = svg_texts(&std::fs::read_to_string(&svg).unwrap());
        for stream in streams {
            let label = format!(
                "{}: {} rows",
                stream["name"].as_str().unwrap(),
                stream["rows"]
            );
            assert!(
                texts.iter().any(|t| t.starts_with(&label)),
                "{path}: overview lacks {label:?}: {texts:?}"
            );
        }

        // A chosen signal: the axis names it and its unit; the PNG shows its line.
        let Some((stream, signal, unit)) = chosen_signal(&info) else {
            continue;
        };
        let pattern = format!("{stream}.{signal}");
        let png = work.path().join(format!("{n}-signal.png"));
        plot(&[
            "plot",
            path,
            "--signal",
            &pattern,
            "--width",
            "700",
            "--height",
            "300",
            "-o",
            png.to_str().unwrap(),
        ]);
        let (w, h, line) = png_facts(&png);
        assert_eq!((w, h), (700, 300), "{path}");
        assert!(
            line > 20,
            "{path}: the line of {pattern} is missing ({line} pixels)"
        );
        let svg = work.path().join(format!("{n}-signal.svg"));
        plot(&[
            "plot",
            path,
            "--signal",
            &pattern,
            "-o",
            svg.to_str().unwrap(),
        ]);
        let texts = svg_texts(&std::fs::read_to_string(&svg).unwrap());
        // Panels per unit name each signal with its stream.
        let axis = match &unit {
            Some(u) => format!("{stream}.{signal} [{u}]"),
            None => format!("{stream}.{signal}"),
        };
        assert!(
            texts.contains(&axis),
            "{path}: no axis text {axis:?} in {texts:?}"
        );
        assert!(
            texts.iter().any(|t| t.starts_with("time [s]")),
            "{path}: no time axis"
        );
        let name = recording
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            texts.iter().any(|t| t.starts_with(&name)),
            "{path}: no title naming the file"
        );
    }
}

#[test]
fn a_time_range_and_panels_per_stream() {
    let Some(log) = samples("carla", "log").into_iter().next() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let svg = work.path().join("range.svg");
    plot(&[
        "plot",
        log.to_str().unwrap(),
        "--signal",
        "position.x",
        "--signal",
        "vehicle_anim.throttle",
        "--start",
        "10s",
        "--end",
        "20s",
        "--panels",
        "stream",
        "-o",
        svg.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&svg).unwrap();
    let texts = svg_texts(&text);
    // One panel per stream, captioned with the stream.
    assert!(texts.iter().any(|t| t == "position"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "vehicle_anim"));
    // The x axis spans the range: its tick labels lie within 10..20 s.
    let ticks: Vec<f64> = texts.iter().filter_map(|t| t.parse().ok()).collect();
    assert!(
        ticks.iter().any(|&t| (10.0..=12.0).contains(&t)),
        "{ticks:?}"
    );
    assert!(
        ticks.iter().any(|&t| (18.0..=20.0).contains(&t)),
        "{ticks:?}"
    );
}

#[test]
fn a_truncated_recording_shows_where_it_ends_and_exits_3() {
    let work = tempfile::tempdir().unwrap();
    let svg = work.path().join("cut.svg");
    let truncated = fixture("usvlog/truncated");
    let out = recfmt(&[
        "plot",
        truncated.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let texts = svg_texts(&std::fs::read_to_string(&svg).unwrap());
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("file ends: truncated at byte")),
        "{texts:?}"
    );
}

#[test]
fn carla_map_and_flightgear_ground_track() {
    let work = tempfile::tempdir().unwrap();
    // Outputs are never replaced without --force: each input gets names of its own.
    for (n, log) in samples("carla", "log").into_iter().enumerate() {
        let svg = work.path().join(format!("{n}-map.svg"));
        plot(&[
            "carla",
            "map",
            log.to_str().unwrap(),
            "-o",
            svg.to_str().unwrap(),
        ]);
        let texts = svg_texts(&std::fs::read_to_string(&svg).unwrap());
        assert!(texts.iter().any(|t| t == "x [m]"), "{texts:?}");
        assert!(texts.iter().any(|t| t.contains("actor tracks")));
        let png = work.path().join(format!("{n}-map.png"));
        plot(&[
            "carla",
            "map",
            log.to_str().unwrap(),
            "--width",
            "640",
            "--height",
            "480",
            "-o",
            png.to_str().unwrap(),
        ]);
        let (w, h, first) = png_facts(&png);
        assert_eq!((w, h), (640, 480));
        assert!(first > 50, "{}: no track drawn", log.display());
    }
    for (n, tape) in samples("fgtape", "fgtape").into_iter().enumerate() {
        let svg = work.path().join(format!("{n}-track.svg"));
        plot(&[
            "plot",
            tape.to_str().unwrap(),
            "--track",
            "-o",
            svg.to_str().unwrap(),
        ]);
        let texts = svg_texts(&std::fs::read_to_string(&svg).unwrap());
        for axis in [
            "longitude [deg]",
            "latitude [deg]",
            "altitude [m]",
            "altitude profile",
        ] {
            assert!(
                texts.iter().any(|t| t == axis),
                "{}: no {axis:?}",
                tape.display()
            );
        }
    }
    let not_carla = fixture("usvlog/all_types");
    let out = recfmt(&[
        "carla",
        "map",
        not_carla.to_str().unwrap(),
        "-o",
        work.path().join("m.svg").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a CARLA recorder log (this is usvlog)")
    );
    let out = recfmt(&[
        "plot",
        not_carla.to_str().unwrap(),
        "--signal",
        "nosuch",
        "-o",
        work.path().join("n.svg").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!work.path().join("n.svg").exists());
    let leftovers: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".n.svg.") && name.ends_with(".partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let out = recfmt(&["plot", "x.log", "-o", "picture.jpg"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains(".svg or .png"));
}

#[test]
fn cut_recordings_plot_and_convert_to_mcap_without_panicking() {
    let work = tempfile::tempdir().unwrap();
    let mut inputs = samples("carla", "log");
    inputs.extend(samples("fgtape", "fgtape"));
    for input in inputs.into_iter().take(3) {
        let bytes = std::fs::read(&input).unwrap();
        let name = input.file_name().unwrap().to_string_lossy().into_owned();
        for cut in [17, bytes.len() / 3, bytes.len() - 5] {
            let path = work.path().join(format!("cut-{cut}-{name}"));
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let p = path.to_str().unwrap();
            // Fresh output names: an existing output would be refused (exit 1) untried.
            let svg = work.path().join(format!("cut-{cut}-{name}.svg"));
            let signal_svg = work.path().join(format!("cut-{cut}-{name}-signal.svg"));
            let mcap = work.path().join(format!("cut-{cut}-{name}.mcap"));
            let runs: [Vec<&str>; 3] = [
                vec!["plot", p, "-o", svg.to_str().unwrap()],
                vec![
                    "plot",
                    p,
                    "--signal",
                    "*",
                    "-o",
                    signal_svg.to_str().unwrap(),
                ],
                vec!["convert", p, "--to", "mcap", "-o", mcap.to_str().unwrap()],
            ];
            for args in runs {
                let out = recfmt(&args);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(
                    matches!(out.status.code(), Some(0 | 1 | 3)) && !stderr.contains("panicked"),
                    "recfmt {args:?}: {:?}\n{stderr}",
                    out.status.code()
                );
            }
        }
    }
}
