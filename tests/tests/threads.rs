//! One conversion on one thread and on several gives the same values (issue 24): the USVLOG
//! decoding threads, the table writers and the HDF5 compressors only change who does the
//! work. CSV and HDF5 files are compared byte for byte; Parquet tables value for value (their
//! row groups may be cut at other rows when the writers' shared memory budget runs out).

use std::path::Path;

use recfmt_tests::{assert_success, files_with_bytes, python_with, recfmt};

fn convert(session: &Path, layout: &Path, to: &str, out: &Path, threads: Option<&str>) {
    let mut args = vec![
        "convert",
        session.to_str().unwrap(),
        "--layout",
        layout.to_str().unwrap(),
        "--to",
        to,
        "-o",
        out.to_str().unwrap(),
    ];
    if let Some(n) = threads {
        args.extend(["--threads", n]);
    }
    let run = recfmt(&args);
    assert_success(&run, &format!("{to} with {threads:?} threads"));
}

#[test]
fn one_thread_and_several_write_the_same_values() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("session");
    // Several 512 KiB blocks per decoding thread and several batches per stream.
    recfmt_tlv::generate::write_bench_session(&session, 24_000_000).expect("session");
    let layout = session.join("layouts.toml");
    let threads = [Some("1"), None, Some("4")];
    for to in ["csv", "hdf5"] {
        let outputs: Vec<_> = threads
            .iter()
            .map(|n| {
                let out = dir.path().join(format!("{to}-{}", n.unwrap_or("default")));
                let target = if to == "hdf5" {
                    out.with_extension("h5")
                } else {
                    out
                };
                convert(&session, &layout, to, &target, *n);
                target
            })
            .collect();
        for other in &outputs[1..] {
            if to == "hdf5" {
                assert!(
                    std::fs::read(&outputs[0]).unwrap() == std::fs::read(other).unwrap(),
                    "{} differs from the one-thread file",
                    other.display()
                );
            } else {
                let (one, several) = (files_with_bytes(&outputs[0]), files_with_bytes(other));
                assert_eq!(one.len(), several.len());
                assert!(one.len() > 10, "{} tables", one.len());
                for ((name, a), (_, b)) in one.iter().zip(&several) {
                    assert!(a == b, "{name} differs in {}", other.display());
                }
            }
        }
    }
    let Some(python) = python_with(&["pyarrow"]) else {
        return;
    };
    let parquet: Vec<_> = threads
        .iter()
        .map(|n| {
            let out = dir
                .path()
                .join(format!("parquet-{}", n.unwrap_or("default")));
            convert(&session, &layout, "parquet", &out, *n);
            out
        })
        .collect();
    let check = std::process::Command::new(&python)
        .args([
            "-c",
            r#"
import glob, os, sys
import pyarrow.parquet as pq
one, *others = sys.argv[1:]
names = sorted(os.path.basename(p) for p in glob.glob(one + '/*.parquet'))
assert len(names) > 10, names
rows = 0
for other in others:
    assert sorted(os.path.basename(p) for p in glob.glob(other + '/*.parquet')) == names
    for name in names:
        a = pq.read_table(os.path.join(one, name))
        b = pq.read_table(os.path.join(other, name))
        assert a.schema.equals(b.schema, check_metadata=True), name
        assert a.equals(b), (name, other)
        rows += a.num_rows
assert rows > 100_000, rows
print(rows)
"#,
        ])
        .args(&parquet)
        .output()
        .unwrap();
    assert_success(&check, "the Python check");
}
