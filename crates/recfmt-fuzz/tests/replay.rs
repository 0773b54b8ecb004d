//! Replays the committed seeds (`corpus/<target>/`) and the inputs of past crashes
//! (`regressions/<target>/`) through the harness bodies, without libFuzzer:
//! part of `cargo test --workspace`, so CI replays the corpus on every run.

use std::path::Path;

#[test]
fn every_seed_and_regression_input_runs_clean() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    for (name, body) in recfmt_fuzz::TARGETS {
        let mut inputs = 0;
        for folder in ["corpus", "regressions"] {
            let dir = fuzz.join(folder).join(name);
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut paths: Vec<_> = entries
                .map(|e| e.expect("a directory entry").path())
                .collect();
            paths.sort();
            for path in paths {
                let bytes = std::fs::read(&path).expect("a corpus file");
                eprintln!("{name}: {}", path.display());
                body(&bytes);
                inputs += 1;
            }
        }
        assert!(
            inputs > 0,
            "no seeds for the fuzz target {name} under fuzz/corpus/{name}"
        );
    }
}

#[test]
fn every_target_has_a_fuzz_target_file_and_a_dictionary() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    for (name, _) in recfmt_fuzz::TARGETS {
        let target = fuzz.join("fuzz_targets").join(format!("{name}.rs"));
        let text = std::fs::read_to_string(&target).expect("fuzz_targets/<name>.rs");
        assert!(
            text.contains(&format!("recfmt_fuzz::{name}(data)")),
            "{} must call recfmt_fuzz::{name}",
            target.display()
        );
        let format = name.split('_').next().expect("a format prefix");
        assert!(
            fuzz.join("dict").join(format!("{format}.dict")).is_file(),
            "no dictionary dict/{format}.dict for {name}"
        );
    }
}

/// `usvlog_batches` compares two paths only if its threaded run really decodes on a thread:
/// the seeds must reach the pipeline (which stays off for inputs too small for two blocks).
#[test]
fn usvlog_batches_seeds_decode_blocks_on_a_thread() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/usvlog_batches");
    for seed in ["all_types_00", "all_types_5a", "unknown_types_ff"] {
        let bytes = std::fs::read(dir.join(seed)).expect("a seed");
        let run = recfmt_fuzz::usvlog_batch_run(&bytes, 1).expect("a seed opens");
        assert!(
            run.calls
                .last()
                .is_some_and(|call| call.starts_with("Ok(false)")),
            "{seed}: the read ends without an error"
        );
        assert!(
            run.blocks_on_threads > 1,
            "{seed}: {} blocks decoded on a thread",
            run.blocks_on_threads
        );
    }
}
