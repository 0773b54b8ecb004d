//! `recfmt convert RUN --to mat`: MAT 7.3 files read by `mat73` and h5py, MAT 5 files read by
//! SciPy's `loadmat` and by GNU Octave's `load`, every field equal, value for value, to what
//! `recfmt cat --output ndjson` prints for the same recording (`tests/python/check_mat.py`).
//!
//! Inputs: the committed ICAREC fixtures (there is no ICAREC recording among the upstream
//! samples; any put in `samples/icarec` is checked too), an ICAREC reproducer whose signal is
//! named like the time, every FlightGear tape and one CARLA log of the samples (text signals
//! left out with a warning, streams without rows).

use std::path::{Path, PathBuf};
use std::process::Command;

use recfmt_tests::{fixture, in_ci, python_with, recfmt, reproducer, samples, samples_dir};

fn inputs() -> Vec<PathBuf> {
    let mut inputs = vec![
        fixture("icarec/all_types.icarec"),
        fixture("icarec/empty_static.icarec"),
    ];
    inputs.extend(reproducer("round2/icarec_signal_named_t.icarec"));
    if let Some(dir) = samples_dir().map(|d| d.join("icarec"))
        && let Ok(entries) = std::fs::read_dir(dir)
    {
        let mut found: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        found.sort();
        inputs.extend(found);
    }
    inputs.extend(samples("fgtape", "fgtape"));
    inputs.extend(samples("carla", "log").into_iter().take(1));
    inputs
}

/// The variables and fields of `input` in a MAT-file, as JSON for the checker.
fn layout(input: &Path) -> serde_json::Value {
    let recording = recfmt::open(input).unwrap();
    let vars = recfmt::icarec::mat::variables(recording.schema());
    serde_json::Value::Array(
        vars.iter()
            .map(|v| {
                serde_json::json!({
                    "stream": v.stream,
                    "variable": v.variable,
                    "fields": v.fields.iter().map(|f| serde_json::json!({
                        "signal": f.signal,
                        "index": f.index,
                        "field": f.field,
                        "class": f.class,
                        "unit": f.unit,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

fn ok(o: &std::process::Output, what: &str) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// GNU Octave's command-line binary, or `None` (a CI run panics instead: `cargo xtask ci`
/// installs it).
fn octave() -> Option<&'static str> {
    for bin in ["octave-cli", "octave"] {
        let found = Command::new(bin)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if found {
            return Some(bin);
        }
    }
    assert!(
        !in_ci(),
        "CI is set but GNU Octave is missing: `cargo xtask ci` installs it (apt-get install octave-cli)"
    );
    eprintln!("skipping the Octave half: no octave-cli (apt-get install octave-cli)");
    None
}

/// What Octave's `load` gives: one line `variable.field v1 v2 ...` per field of every
/// stream variable, the values as doubles with 17 significant digits.
fn octave_dump(octave: &str, mat: &Path, dump: &Path) {
    let script = format!(
        "r = load('{}'); fid = fopen('{}', 'w'); vs = fieldnames(r); \
         for i = 1:numel(vs), v = vs{{i}}; if strcmp(v, 'units'), continue; end; \
         s = r.(v); fs = fieldnames(s); \
         for j = 1:numel(fs), fprintf(fid, '%s.%s', v, fs{{j}}); \
         fprintf(fid, ' %.17g', double(s.(fs{{j}}))); fprintf(fid, '\\n'); end; end; fclose(fid);",
        mat.display(),
        dump.display()
    );
    let o = Command::new(octave)
        .args(["--no-gui", "--norc", "--quiet", "--eval", &script])
        .output()
        .expect("run octave");
    assert!(
        o.status.success() && dump.exists(),
        "octave load({}): {}",
        mat.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn mat_files_hold_every_value_cat_prints() {
    let Some(python) = python_with(&["numpy", "h5py", "mat73", "scipy.io"]) else {
        return;
    };
    let octave = octave();
    let checker = recfmt_tests::workspace_root().join("tests/python/check_mat.py");
    let work = tempfile::tempdir().unwrap();
    let inputs = inputs();
    assert!(inputs.len() >= 3, "{inputs:?}");
    for (n, input) in inputs.iter().enumerate() {
        let input_s = input.to_str().unwrap();
        let rows = work.path().join(format!("{n}.ndjson"));
        let o = recfmt(&["cat", "--output", "ndjson", input_s]);
        ok(&o, "cat");
        std::fs::write(&rows, &o.stdout).unwrap();
        let layout_path = work.path().join(format!("{n}.layout.json"));
        std::fs::write(&layout_path, layout(input).to_string()).unwrap();
        for version in ["7.3", "5"] {
            let mat = work.path().join(format!("{n}-v{version}.mat"));
            let option = format!("mat.version={version}");
            let o = recfmt(&[
                "convert",
                input_s,
                "--to",
                "mat",
                "-o",
                mat.to_str().unwrap(),
                "--opt",
                &option,
            ]);
            let stderr = ok(&o, &format!("convert {input_s} to MAT {version}"));
            let mut check = Command::new(&python);
            check.arg(&checker).args([
                mat.as_os_str(),
                version.as_ref(),
                rows.as_os_str(),
                layout_path.as_os_str(),
            ]);
            if version == "5"
                && let Some(octave) = octave
            {
                let dump = work.path().join(format!("{n}.octave.txt"));
                octave_dump(octave, &mat, &dump);
                check.arg(&dump);
            }
            let o = check.output().unwrap();
            assert!(
                o.status.success(),
                "{input_s} MAT {version}: {}{}\nconvert said: {stderr}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            eprint!("{}", String::from_utf8_lossy(&o.stdout));
        }
    }
}

#[test]
fn text_signals_are_left_out_with_a_warning() {
    let Some(carla) = samples("carla", "log").into_iter().next() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("run.mat");
    let o = recfmt(&[
        "convert",
        carla.to_str().unwrap(),
        "--to",
        "mat",
        "-o",
        out.to_str().unwrap(),
    ]);
    let stderr = ok(&o, "convert");
    assert!(
        stderr.contains("warning: stream event_add: left out 2") && stderr.contains("blueprint"),
        "{stderr}"
    );
}

#[test]
fn the_version_option_is_checked_and_outputs_are_atomic() {
    let input = fixture("icarec/all_types.icarec");
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("run.mat");
    let args = |version: &str| {
        vec![
            "convert".to_owned(),
            input.to_str().unwrap().to_owned(),
            "--to".into(),
            "mat".into(),
            "-o".into(),
            out.to_str().unwrap().to_owned(),
            "--opt".into(),
            format!("mat.version={version}"),
        ]
    };
    let run = |version: &str| {
        let a = args(version);
        recfmt(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let o = run("4");
    assert_ne!(o.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("mat option version=4: expected one of 7.3, 5"),
        "{stderr}"
    );
    assert!(recfmt_tests::list_files(work.path()).is_empty());

    // Written whole, then never replaced without --force, whichever the version; no
    // temporary file is left beside it.
    assert_eq!(run("5").status.code(), Some(0));
    let first = std::fs::read(&out).unwrap();
    assert_eq!(&first[126..128], b"IM");
    for version in ["5", "7.3"] {
        assert_ne!(run(version).status.code(), Some(0));
        assert_eq!(std::fs::read(&out).unwrap(), first);
    }
    assert_eq!(recfmt_tests::list_files(work.path()), ["run.mat"]);
}
