//! Regressions of hardening round 2 (issue 26) with its reproducers: plots whose values or
//! times do not fit a double end (items 1, 14), and many streams cost memory by what is drawn
//! or merged, not by the stream count (items 2, 3). Memory is the peak resident size under a
//! 2 GiB address-space limit, as the review measured it.

use std::path::Path;
use std::process::{Command, Output};

use recfmt_tests::{fixture, recfmt_bin, reproducer};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `recfmt args` under a 2 GiB address-space limit (`prlimit`), with its peak resident size
/// in KiB (GNU time); `None` where either tool is missing.
fn limited(args: &[&str]) -> Option<(Output, u64)> {
    let (time, prlimit) = (Path::new("/usr/bin/time"), Path::new("/usr/bin/prlimit"));
    if !(time.exists() && prlimit.exists()) {
        assert!(
            !recfmt_tests::in_ci(),
            "CI is set but /usr/bin/time or /usr/bin/prlimit is missing"
        );
        eprintln!("skipping: no /usr/bin/time or /usr/bin/prlimit");
        return None;
    }
    let out = Command::new(time)
        .args(["-f", "PEAK_KIB=%M", "prlimit", "--as=2147483648"])
        .arg(recfmt_bin())
        .args(args)
        .output()
        .unwrap();
    let kib = stderr(&out)
        .lines()
        .find_map(|l| l.strip_prefix("PEAK_KIB=")?.trim().parse().ok())
        .expect("GNU time's PEAK_KIB line");
    Some((out, kib))
}

#[test]
fn plots_beyond_a_double_end_with_exit_1_or_a_picture() {
    let work = tempfile::tempdir().unwrap();
    let svg = work.path().join("x.svg");
    if let Some(huge) = reproducer("round2/plot_huge_range.icarec") {
        let o = recfmt_tests::recfmt(&["plot", s(&huge), "--signal", "S.*", "-o", s(&svg)]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("no axis can show them"),
            "{}",
            stderr(&o)
        );
        assert!(!svg.exists());
    }
    if let Some(fmax) = reproducer("round2/plot_fmax_const.icarec") {
        let o = recfmt_tests::recfmt(&["plot", s(&fmax), "--signal", "S.*", "-o", s(&svg)]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(svg.exists());
    }
    let png = work.path().join("x.png");
    let o = recfmt_tests::recfmt(&[
        "plot",
        s(&fixture("icarec/all_types.icarec")),
        "--signal",
        "Vehicle.Aero.alpha",
        "--start=-1e308s",
        "--end",
        "1e308s",
        "-o",
        s(&png),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the time range asked for (--start, --end)"),
        "{}",
        stderr(&o)
    );
    assert!(!png.exists());
}

#[test]
fn an_overview_of_8000_streams_stays_small() {
    let (Some(session), Some(layout)) = (
        reproducer("round2/overview_8000_streams"),
        reproducer("round2/overview_8000_streams.layout.toml"),
    ) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let svg = work.path().join("o.svg");
    let Some((o, kib)) = limited(&["--layout", s(&layout), "plot", s(&session), "-o", s(&svg)])
    else {
        return;
    };
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains(" streams, "), "no title naming the streams");
    // 4096 buckets per stream up front aborted at 2 GiB; filled buckets only: 124 MB (debug).
    assert!(kib < 400 * 1024, "peak memory {kib} KiB");
}

#[test]
fn merging_1000_one_row_streams_stays_small() {
    let Some(dir) = reproducer("round2/merge_many_streams") else {
        return;
    };
    let layout = dir.join("lay1000.toml");
    let session = dir.join("usv1000");
    let work = tempfile::tempdir().unwrap();
    for (n, rule) in ["union", "asof:S0", "raster:1ms"].into_iter().enumerate() {
        let out = work.path().join(format!("out{n}"));
        let Some((o, kib)) = limited(&[
            "--layout",
            s(&layout),
            "convert",
            s(&session),
            "--merge",
            rule,
            "--to",
            "csv",
            "-o",
            s(&out),
        ]) else {
            return;
        };
        assert_eq!(o.status.code(), Some(0), "{rule}: {}", stderr(&o));
        let csv = std::fs::read_to_string(out.join("merged.csv")).unwrap();
        let rows = if rule.starts_with("asof") { 1 } else { 1000 };
        assert_eq!(csv.lines().count(), 1 + rows, "{rule}");
        // A reader per stream took 3.9 GB; one shared reader: 43-70 MB (debug).
        assert!(kib < 300 * 1024, "{rule}: peak memory {kib} KiB");
    }
}
