//! Opening a tape: Normal (a first pass that checks the gzip stream and counts the frames),
//! Continuous and Recovery (the header), and what the header tells the metadata.

use std::collections::VecDeque;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use recfmt_core::{Header, Integrity, ReadOptions, TimeReference, TimeSystem};

use super::{FgTape, Frames, NormalFrames, rows, starts_with_magic};
use crate::continuous::{self, ContinuousFrame};
use crate::error::FORMAT_ID;
use crate::normal::{self, Frame, RAW_DATA_NAMES};
use crate::props::PropNode;
use crate::signals::{SignalLayout, SignalType};

impl FgTape {
    /// Opens a tape, detecting Normal versus Continuous/Recovery from the first bytes.
    pub fn open(path: impl AsRef<Path>, options: &ReadOptions) -> crate::Result<Self> {
        let path = path.as_ref();
        let size = std::fs::metadata(path)?.len();
        if starts_with_magic(path)? {
            match Self::open_continuous(path, options, size) {
                Err(e) if e.is_truncation() && !options.strict => {
                    // Continuous tapes are not compressed: the offset is in the file.
                    let lost = size.saturating_sub(e.offset().map_or(size, |o| o.get()));
                    Ok(Self::cut_in_header(path, "continuous", None, e, lost, size))
                }
                result => result,
            }
        } else {
            Self::open_normal(path, options, size)
        }
    }

    /// A tape that ends inside its header (Continuous: only the header was read when the
    /// error came): no streams, since the signal layout is unknown; the Meta tree when it
    /// was read; truncated where the incomplete part starts, `lost` bytes after it.
    fn cut_in_header(
        path: &Path,
        kind: &str,
        meta_tree: Option<&crate::props::PropertyList>,
        e: crate::Error,
        lost: u64,
        size: u64,
    ) -> Self {
        let mut integrity = Integrity::default();
        let offset = e.offset().map_or(0, |o| o.get());
        integrity.truncate(offset, lost);
        integrity.warn(format!(
            "reading stopped: {e}; the tape ends inside its header, so no frames could be read"
        ));
        let mut meta = recfmt_core::Metadata::new();
        if let Some(tree) = meta_tree {
            flatten(&tree.root, "", &mut meta);
        }
        meta.insert("fgtape.kind".into(), kind.into());
        meta.insert(
            "fgtape.frames".into(),
            RAW_DATA_NAMES
                .iter()
                .map(|n| format!("{n}=0"))
                .collect::<Vec<_>>()
                .join(" "),
        );
        let version = meta_tree
            .and_then(|t| t.get("meta/version/flightgear"))
            .and_then(PropNode::string_value)
            .unwrap_or("")
            .to_owned();
        let frames = NormalFrames {
            path: path.to_path_buf(),
            options: ReadOptions::default(),
            kept: [0; 3],
            todo: Vec::new(),
            current: None,
            frame: Frame::default(),
            emitted: 0,
        };
        Self::assemble(
            version,
            meta,
            None,
            false,
            false,
            Frames::Normal(Box::new(frames)),
            integrity,
            size,
            false,
        )
    }

    fn open_normal(path: &Path, options: &ReadOptions, size: u64) -> crate::Result<Self> {
        let file = BufReader::with_capacity(64 * 1024, File::open(path)?);
        let mut reader = normal::Reader::with_options(file, options)?;
        let header = match reader.read_header() {
            Ok(header) => header.clone(),
            Err(e) if e.is_truncation() && !options.strict => {
                let lost = reader
                    .position()
                    .saturating_sub(e.offset().map_or(0, |o| o.get()));
                return Ok(Self::cut_in_header(
                    path,
                    "normal",
                    reader.meta(),
                    e,
                    lost,
                    size,
                ));
            }
            Err(e) => return Err(e),
        };
        let mut integrity = Integrity::default();
        let mut kept = [0u64; 3];
        let outcome = (|| -> crate::Result<()> {
            let mut scratch = Frame::default();
            while let Some(h) = reader.next_container()? {
                while reader.read_frame(&mut scratch)? {
                    kept[h.index] += 1;
                }
            }
            Ok(())
        })();
        if let Err(e) = outcome {
            if options.strict {
                return Err(e);
            }
            let offset = e.offset().map_or(reader.position(), |o| o.get());
            if e.is_truncation() {
                integrity.truncate(offset, reader.position().saturating_sub(offset));
            } else {
                integrity.skip_corrupt(offset, 0, &e.to_string());
            }
            integrity.warn(format!("reading stopped: {e}"));
        }
        for w in reader.warnings() {
            integrity.warn(w.clone());
        }
        let frames = NormalFrames {
            path: path.to_path_buf(),
            options: options.clone(),
            kept,
            todo: (0..3).filter(|&i| kept[i] > 0).collect(),
            current: None,
            frame: Frame::default(),
            emitted: 0,
        };

        let mut meta = recfmt_core::Metadata::new();
        flatten(&header.meta.tree.root, "", &mut meta);
        meta.insert("fgtape.kind".into(), "normal".into());
        if let Some(d) = reader.layout() {
            meta.insert("fgtape.layout".into(), d.layout.name().into());
        }
        meta.insert(
            "fgtape.frames".into(),
            RAW_DATA_NAMES
                .iter()
                .zip(&frames.kept)
                .map(|(n, k)| format!("{n}={k}"))
                .collect::<Vec<_>>()
                .join(" "),
        );
        recorder_metadata(&header.config.tree.root, &header.signals, &mut meta);
        let has_mp = header.multiplayer != normal::MpEncoding::None;
        let layout = header.signals.clone();
        Ok(Self::assemble(
            header.flightgear_version().unwrap_or("").to_owned(),
            meta,
            Some(layout),
            has_mp,
            false,
            Frames::Normal(Box::new(frames)),
            integrity,
            size,
            options.strict,
        ))
    }

    fn open_continuous(path: &Path, options: &ReadOptions, size: u64) -> crate::Result<Self> {
        let reader = continuous::Reader::open_with(path, options)?;
        let h = reader.header().clone();
        let mut integrity = Integrity::default();
        for w in reader.warnings() {
            integrity.warn(w.clone());
        }
        let mut meta = recfmt_core::Metadata::new();
        flatten(&h.xml.tree.root, "", &mut meta);
        let kind = if h.is_recovery_like() {
            "recovery"
        } else {
            "continuous"
        };
        meta.insert("fgtape.kind".into(), kind.into());
        if let (Some(layout), Some(config)) = (&h.signals, h.xml.tree.get("signals")) {
            recorder_metadata(config, layout, &mut meta);
        }
        let version = h
            .xml
            .tree
            .get("meta/version/flightgear")
            .and_then(PropNode::string_value)
            .unwrap_or("")
            .to_owned();
        let signals = h
            .item_index(continuous::ITEM_SIGNALS)
            .filter(|_| h.signals.is_some());
        let multiplayer = h.item_index(continuous::ITEM_MULTIPLAYER);
        let extra = h.item_index(continuous::ITEM_EXTRA_PROPERTIES);
        Ok(Self::assemble(
            version,
            meta,
            if signals.is_some() {
                h.signals.clone()
            } else {
                None
            },
            multiplayer.is_some(),
            extra.is_some(),
            Frames::Continuous {
                reader: Box::new(reader),
                frame: ContinuousFrame::default(),
                signals,
                multiplayer,
                extra,
            },
            integrity,
            size,
            options.strict,
        ))
    }

    #[allow(clippy::too_many_arguments)]
    #[allow(clippy::too_many_arguments)]
    fn assemble(
        version: String,
        metadata: recfmt_core::Metadata,
        layout: Option<SignalLayout>,
        has_mp: bool,
        has_extra: bool,
        frames: Frames,
        integrity: Integrity,
        size: u64,
        strict: bool,
    ) -> Self {
        let (schema, streams) = rows::schema(layout.as_ref(), has_mp, has_extra);
        FgTape {
            header: Header {
                format: FORMAT_ID,
                version,
                time: Some(TimeReference::new(TimeSystem::Met)),
                metadata,
            },
            schema,
            integrity,
            layout,
            frames,
            pending: VecDeque::new(),
            streams,
            size,
            done: false,
            strict,
            stop: f64::INFINITY,
            stopped: false,
            seek_read: 0,
        }
    }
}

/// Adds every leaf of a tree as `path = value` (paths simplified, `/`-separated).
fn flatten(node: &PropNode, prefix: &str, out: &mut recfmt_core::Metadata) {
    for child in &node.children {
        let step = if child.index == 0 {
            child.name.clone()
        } else {
            format!("{}[{}]", child.name, child.index)
        };
        let path = if prefix.is_empty() {
            step
        } else {
            format!("{prefix}/{step}")
        };
        if let Some(v) = &child.value {
            out.insert(path.clone(), v.text.clone());
        }
        if out.len() < 10_000 {
            flatten(child, &path, out);
        }
    }
}

fn recorder_metadata(config: &PropNode, layout: &SignalLayout, out: &mut recfmt_core::Metadata) {
    if let Some(name) = config.get("name").and_then(PropNode::string_value) {
        out.insert("fgtape.recorder".into(), name.into());
    }
    out.insert(
        "fgtape.record_size".into(),
        layout.record_size().to_string(),
    );
    let counts: Vec<String> = SignalType::ALL
        .iter()
        .map(|t| format!("{}={}", t.name(), layout.count(*t)))
        .collect();
    out.insert("fgtape.signal_counts".into(), counts.join(" "));
}
