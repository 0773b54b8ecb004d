//! Errors keep their kind through every layer, name the file they are about, and say each
//! thing once: a CARLA log cut short is `Truncated` through `recfmt::open` and
//! `recfmt::convert`, a wrong magic is `Malformed`, and the command line's text and exit codes
//! are as before.

use std::path::{Path, PathBuf};

use recfmt::OpenOptions;
use recfmt::core::{ErrorKind, FrameBuf};
use recfmt_tests::recfmt;

/// A CARLA log of two actors over 2.5 s, written by `recfmt convert --to carla`.
fn carla_log(dir: &Path) -> PathBuf {
    let csv = dir.join("tracks.csv");
    let mut text = String::from("time,id,blueprint,x,y,z,roll,pitch,yaw\n");
    for step in 0..50u32 {
        let t = f64::from(step) * 0.05;
        for id in [7u32, 9] {
            let x = f64::from(step) * 0.5 + f64::from(id);
            text.push_str(&format!(
                "{t},{id},vehicle.tesla.model3,{x},1.5,0.5,0,0,90\n"
            ));
        }
    }
    std::fs::write(&csv, text).unwrap();
    let log = dir.join("tracks.log");
    let out = recfmt(&[
        "convert",
        csv.to_str().unwrap(),
        "--to",
        "carla",
        "-o",
        log.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    log
}

/// The log cut in the middle of a packet.
fn torn_log(dir: &Path) -> PathBuf {
    let bytes = std::fs::read(carla_log(dir)).unwrap();
    let torn = dir.join("torn.log");
    std::fs::write(&torn, &bytes[..bytes.len() * 2 / 3 + 1]).unwrap();
    torn
}

fn strict() -> OpenOptions {
    OpenOptions {
        strict: true,
        ..OpenOptions::default()
    }
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_torn_carla_log_is_truncated_through_open_and_the_read_error_names_the_file() {
    let work = tempfile::tempdir().unwrap();
    let torn = torn_log(work.path());
    let mut reader = recfmt::open_with(recfmt::default_registry(), &torn, &strict())
        .unwrap()
        .into_reader();
    let mut frame = FrameBuf::default();
    let e = loop {
        match reader.read_frame(&mut frame) {
            Ok(true) => {}
            Ok(false) => panic!("a strict read of a torn log must fail"),
            Err(e) => break e,
        }
    };
    assert_eq!(e.kind(), ErrorKind::Truncated, "{e}");
    let text = e.to_string();
    assert!(
        text.starts_with(&format!("{}: carla: ", torn.display())),
        "{text}"
    );
    assert_eq!(text.matches("at byte").count(), 1, "{text}");
    assert_eq!(
        text.matches(&torn.display().to_string()).count(),
        1,
        "{text}"
    );
}

#[test]
fn a_torn_carla_log_is_truncated_through_convert_and_the_message_says_why() {
    let work = tempfile::tempdir().unwrap();
    let torn = torn_log(work.path());
    let options = recfmt::convert::ConvertOptions {
        target: "csv".into(),
        open: strict(),
        ..Default::default()
    };
    let out = work.path().join("tables");
    let e = recfmt::convert::convert(recfmt::default_registry(), &torn, &out, &options, None)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Truncated, "{e}");
    let text = e.to_string();
    assert!(
        text.starts_with(&format!("converting {} into ", torn.display())),
        "{text}"
    );
    assert!(text.contains(": carla: "), "{text}");
    assert_eq!(text.matches("at byte").count(), 1, "{text}");
    // Code that speaks only the core error keeps the kind too.
    assert_eq!(e.into_core().kind(), ErrorKind::Truncated);

    // The command line prints it once, on one line, and exits 1 as for every error.
    let cli = recfmt(&[
        "convert",
        "--strict",
        torn.to_str().unwrap(),
        "--to",
        "csv",
        "-o",
        work.path().join("cli").to_str().unwrap(),
    ]);
    assert_eq!(cli.status.code(), Some(1));
    let err = stderr(&cli);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(err.matches("at byte").count(), 1, "{err}");

    // Lenient, the truncation is no error: the integrity says it and the exit code is 3.
    let lenient = recfmt(&[
        "convert",
        torn.to_str().unwrap(),
        "--to",
        "csv",
        "-o",
        work.path().join("lenient").to_str().unwrap(),
    ]);
    assert_eq!(lenient.status.code(), Some(3), "{}", stderr(&lenient));
    let report = recfmt::convert::convert(
        recfmt::default_registry(),
        &torn,
        &work.path().join("lenient2"),
        &recfmt::convert::ConvertOptions {
            target: "csv".into(),
            ..Default::default()
        },
        None,
    )
    .unwrap();
    assert_eq!(report.outcome, recfmt::Outcome::DataLost);
}

#[test]
fn a_wrong_magic_is_malformed_and_says_what_was_found() {
    let work = tempfile::tempdir().unwrap();
    let log = carla_log(work.path());
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[2] = 0xfe; // the magic's length: 0xfe + 256 * bytes[3]
    let bad = work.path().join("bad.log");
    std::fs::write(&bad, &bytes).unwrap();
    let options = OpenOptions {
        format: Some("carla".into()),
        ..OpenOptions::default()
    };
    let e = match recfmt::open_with(recfmt::default_registry(), &bad, &options) {
        Ok(_) => panic!("a wrong magic must fail"),
        Err(e) => e,
    };
    assert_eq!(e.kind(), ErrorKind::Malformed, "{e}");
    let text = e.to_string();
    assert!(
        text.ends_with(
            "carla: at byte 2: not a CARLA recorder file: expected the magic string \"CARLA_RECORDER\", found a 254-byte string"
        ),
        "{text}"
    );
    assert_eq!(text.matches("at byte").count(), 1, "{text}");
    assert!(text.starts_with(&bad.display().to_string()), "{text}");
}
