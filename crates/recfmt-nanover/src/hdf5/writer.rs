//! The output file of the NanoVer HDF5 export, through the HDF5 writing module `recfmt-h5`:
//! each session part is staged as one group with its datasets and committed whole.

use std::path::Path;

use hdf5_pure::{AttrValue, Datatype, FileBuilder};
use recfmt_core::ResultExt;
use recfmt_h5::{H5Output, text, write_error};

use super::part::Part;
use super::spec::{Data, Spec, stage};
use super::{Hdf5Options, Hdf5Summary, SessionGroup};

/// The `/state` table, buffered whole.
#[derive(Default)]
pub(super) struct StateTable {
    pub(super) t_us: Vec<u64>,
    pub(super) key: Vec<String>,
    pub(super) value: Vec<String>,
    pub(super) removed: Vec<u8>,
    pub(super) bytes: u64,
}

/// The file being written: the root attributes first, then one group per session part, each
/// committed whole, then `/state` and the session count.
pub(super) struct H5Writer {
    out: H5Output,
    options: Hdf5Options,
    bool_t: Datatype,
    pub(super) summary: Hdf5Summary,
}

impl H5Writer {
    pub(super) fn create(
        out: &Path,
        options: &Hdf5Options,
        root: &[(String, String)],
    ) -> recfmt_core::Result<Self> {
        if options.deflate.is_some_and(|l| l > 9) {
            return Err(recfmt_core::Error::invalid(
                "HDF5 deflate level must be 0 to 9",
            ));
        }
        let bool_t = recfmt_h5::bool_datatype()
            .map_err(|e| recfmt_core::Error::invalid(format!("HDF5 bool type: {e}")))?;
        let mut fb = FileBuilder::new();
        for (k, v) in root {
            fb.set_attr(k, text(v.clone()));
        }
        Ok(H5Writer {
            out: H5Output::create(out, options.replace, fb)?,
            options: options.clone(),
            bool_t,
            summary: Hdf5Summary::default(),
        })
    }

    fn group(
        &self,
        name: &str,
        attrs: &[(String, AttrValue)],
        specs: &[Spec],
    ) -> recfmt_core::Result<()> {
        let file = self.out.file();
        let target = self.out.target();
        let deflate = self.options.deflate;
        file.root()
            .create_group_with(name, |g| {
                for (k, v) in attrs {
                    g.set_attr(k, v.clone());
                }
                for spec in specs {
                    stage(g, spec, deflate, &self.bool_t);
                }
            })
            .map_err(|e| write_error(target, format!("writing the group {name}"), e))?;
        file.commit()
            .map_err(|e| write_error(target, format!("writing the group {name}"), e))
    }

    pub(super) fn write_part(&mut self, part: Part) -> recfmt_core::Result<()> {
        let group = part.group_name();
        let entry = SessionGroup {
            group: format!("/{group}"),
            session: part.session,
            part: part.part,
            frames: part.rows,
            particles: part.particles as u64,
        };
        let (attrs, specs) = part.specs(&mut self.summary.notes);
        self.group(&group, &attrs, &specs)?;
        self.summary.sessions.push(entry);
        Ok(())
    }

    pub(super) fn finish(mut self, state: Option<StateTable>) -> recfmt_core::Result<Hdf5Summary> {
        if let Some(s) = state {
            let n = s.t_us.len() as u64;
            let specs = vec![
                Spec {
                    name: "t_us".into(),
                    data: Data::U64(s.t_us),
                    shape: vec![n],
                    per_frame: true,
                    attrs: vec![("unit".into(), text("us"))],
                },
                Spec {
                    name: "key".into(),
                    data: Data::Str(s.key),
                    shape: vec![n],
                    per_frame: false,
                    attrs: Vec::new(),
                },
                Spec {
                    name: "value".into(),
                    data: Data::Str(s.value),
                    shape: vec![n],
                    per_frame: false,
                    attrs: vec![("encoding".into(), text("json"))],
                },
                Spec {
                    name: "removed".into(),
                    data: Data::Bool(s.removed),
                    shape: vec![n],
                    per_frame: false,
                    attrs: Vec::new(),
                },
            ];
            let attrs = vec![(
                "rows".to_string(),
                text("one row per key a state update sets (value as JSON text) or removes"),
            )];
            self.group("state", &attrs, &specs)?;
            self.summary.state_rows = n;
        }
        let sessions = self.summary.sessions.len() as u64;
        let file = self.out.file();
        let target = self.out.target().to_path_buf();
        let root_attrs = |e| write_error(&target, "writing the root attributes", e);
        file.root()
            .set_attr("sessions", AttrValue::U64(sessions))
            .map_err(root_attrs)?;
        file.commit().map_err(root_attrs)?;
        self.out.finish()?;
        self.summary.bytes = std::fs::metadata(&target).in_file(&target)?.len();
        Ok(self.summary)
    }
}
