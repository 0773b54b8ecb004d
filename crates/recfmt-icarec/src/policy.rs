//! Recording policies: which signals a recorder keeps (include and exclude globs), and the
//! `warmstart_compatible` check that refuses to drop a signal warmstart needs.

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::error::{Error, Result};
use crate::metadata::SelectionSpec;
use crate::schema::{Lifecycle, Schema, SchemaBuilder, SchemaDoc};

/// Which signals to record.
///
/// Patterns are globs over whole signal names: `*` matches any run of characters (dots
/// included), `?` one character, `[abc]` a class, `{a,b}` alternatives. A signal is recorded
/// when it matches an `include` pattern (or `include` is empty) and no `exclude` pattern.
/// Composite signals are matched by their own name, never split.
///
/// ```
/// use recfmt_icarec::RecordingPolicy;
/// let policy = RecordingPolicy {
///     exclude: vec!["Debug.*".into(), "*.raw_sensor_*".into()],
///     ..RecordingPolicy::default()
/// }
/// .compile()?;
/// assert!(policy.records("Vehicle.Nav.position"));
/// assert!(!policy.records("Debug.counter"));
/// assert!(!policy.records("Vehicle.IMU.raw_sensor_gyro"));
/// # Ok::<(), recfmt_icarec::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordingPolicy {
    /// Record only signals matching one of these (all when empty).
    pub include: Vec<String>,
    /// Never record signals matching one of these.
    pub exclude: Vec<String>,
    /// Refuse to record when a signal warmstart requires would be left out.
    pub warmstart_compatible: bool,
}

impl Default for RecordingPolicy {
    fn default() -> Self {
        RecordingPolicy {
            include: Vec::new(),
            exclude: Vec::new(),
            warmstart_compatible: true,
        }
    }
}

impl RecordingPolicy {
    /// Compiles the patterns; a bad pattern is an error naming it.
    pub fn compile(&self) -> Result<CompiledPolicy> {
        let build = |patterns: &[String]| -> Result<GlobSet> {
            let mut b = GlobSetBuilder::new();
            for p in patterns {
                let glob = Glob::new(p)
                    .map_err(|e| Error::invalid(format!("bad recording pattern {p:?}: {e}")))?;
                b.add(glob);
            }
            b.build()
                .map_err(|e| Error::invalid(format!("bad recording patterns: {e}")))
        };
        Ok(CompiledPolicy {
            include: if self.include.is_empty() {
                None
            } else {
                Some(build(&self.include)?)
            },
            exclude: build(&self.exclude)?,
            policy: self.clone(),
        })
    }
}

/// A [`RecordingPolicy`] ready to match names.
#[derive(Debug, Clone)]
pub struct CompiledPolicy {
    include: Option<GlobSet>,
    exclude: GlobSet,
    policy: RecordingPolicy,
}

impl CompiledPolicy {
    /// Whether a signal called `name` is recorded.
    pub fn records(&self, name: &str) -> bool {
        self.include.as_ref().is_none_or(|s| s.is_match(name)) && !self.exclude.is_match(name)
    }

    /// Names of signals that warmstart requires (`required`, default true) but this policy
    /// excludes.
    pub fn excluded_required(&self, schema: &SchemaDoc) -> Vec<String> {
        schema
            .signals
            .iter()
            .filter(|s| s.is_required() && !self.records(&s.name))
            .map(|s| s.name.clone())
            .collect()
    }

    /// Checks that no required signal is excluded when `warmstart_compatible` is set.
    ///
    /// ```
    /// use recfmt_icarec::{Lifecycle, RecordingPolicy, SchemaBuilder, SignalSpec, SignalType};
    /// let schema = SchemaBuilder::new("1.0.0", "0.5.0", "2026-02-16T12:00:00Z")?
    ///     .signal("Vehicle.Nav.position", SignalType::Vec3, Lifecycle::Dynamic, "m")
    ///     .spec(SignalSpec::new("Debug.counter", &SignalType::Int64, Lifecycle::Dynamic).with_required(false))
    ///     .build()?;
    /// let drop_debug = RecordingPolicy { exclude: vec!["Debug.*".into()], ..Default::default() };
    /// assert!(drop_debug.compile()?.check_warmstart(schema.doc()).is_ok());
    /// let drop_nav = RecordingPolicy { exclude: vec!["*.Nav.*".into()], ..Default::default() };
    /// let err = drop_nav.compile()?.check_warmstart(schema.doc()).unwrap_err();
    /// assert!(err.to_string().contains("Vehicle.Nav.position"));
    /// # Ok::<(), recfmt_icarec::Error>(())
    /// ```
    pub fn check_warmstart(&self, schema: &SchemaDoc) -> Result<()> {
        if !self.policy.warmstart_compatible {
            return Ok(());
        }
        let excluded = self.excluded_required(schema);
        if excluded.is_empty() {
            Ok(())
        } else {
            Err(Error::Policy { excluded })
        }
    }

    /// Applies the policy to a full schema: checks warmstart, then builds the recorded schema
    /// (kept signals in order, each lifecycle packed again from offset 0) and the byte map
    /// from full payloads to recorded ones.
    pub fn select(&self, full: &Schema) -> Result<Selection> {
        self.check_warmstart(full.doc())?;
        let doc = full.doc();
        let mut recorded = doc.clone();
        recorded.signals.clear();
        recorded.checksum = None;
        if !self.excluded_required(doc).is_empty() {
            recorded.compatibility.warmstart_compatible = false;
        }
        let mut builder = SchemaBuilder::from_doc(recorded);
        let mut kept = Vec::new();
        for p in &full.layout().placed {
            let spec = full.spec(p);
            if self.records(&spec.name) {
                builder = builder.spec(spec.clone());
                kept.push(p.clone());
            }
        }
        let schema = builder.build()?;
        let mut dynamic_map = Vec::new();
        let mut static_map = Vec::new();
        for src in &kept {
            let name = &full.spec(src).name;
            let Some(dst) = schema.placed(name) else {
                continue;
            };
            let entry = (src.offset, dst.offset, src.size);
            match src.lifecycle {
                Lifecycle::Dynamic => dynamic_map.push(entry),
                Lifecycle::Static => static_map.push(entry),
            }
        }
        Ok(Selection {
            full_dynamic: full.layout().dynamic_size,
            full_static: full.layout().static_size,
            schema,
            dynamic_map,
            static_map,
            spec: SelectionSpec {
                mode: Some(
                    if self.policy.include.is_empty() && self.policy.exclude.is_empty() {
                        "all"
                    } else {
                        "signals"
                    }
                    .into(),
                ),
                include: self.policy.include.clone(),
                exclude: self.policy.exclude.clone(),
                extra: serde_json::Map::new(),
            },
        })
    }
}

/// The result of applying a policy: the recorded schema and how to project full payloads.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The schema of the recording.
    pub schema: Schema,
    /// What to write as `metadata.json`'s `selection`.
    pub spec: SelectionSpec,
    full_dynamic: usize,
    full_static: usize,
    dynamic_map: Vec<(usize, usize, usize)>,
    static_map: Vec<(usize, usize, usize)>,
}

impl Selection {
    /// Copies the kept signals of a full dynamic payload into `out` (resized to the recorded
    /// payload size).
    pub fn project_dynamic(&self, full: &[u8], out: &mut Vec<u8>) -> Result<()> {
        project(
            &self.dynamic_map,
            self.full_dynamic,
            self.schema.layout().dynamic_size,
            full,
            out,
        )
    }

    /// Copies the kept signals of a full static block into `out`.
    pub fn project_static(&self, full: &[u8], out: &mut Vec<u8>) -> Result<()> {
        project(
            &self.static_map,
            self.full_static,
            self.schema.layout().static_size,
            full,
            out,
        )
    }
}

fn project(
    map: &[(usize, usize, usize)],
    full_size: usize,
    size: usize,
    full: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    if full.len() != full_size {
        return Err(Error::invalid(format!(
            "a full payload has {full_size} bytes, got {}",
            full.len()
        )));
    }
    out.clear();
    out.resize(size, 0);
    for &(src, dst, len) in map {
        out[dst..dst + len].copy_from_slice(&full[src..src + len]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SignalSpec, SignalType};

    fn full() -> Schema {
        SchemaBuilder::new("1.0.0", "0.5.0", "2026-02-16T12:00:00Z")
            .unwrap()
            .signal(
                "Vehicle.Nav.position",
                SignalType::Vec3,
                Lifecycle::Dynamic,
                "m",
            )
            .spec(
                SignalSpec::new("Debug.counter", &SignalType::Int64, Lifecycle::Dynamic)
                    .with_required(false),
            )
            .spec(
                SignalSpec::new(
                    "Vehicle.IMU.raw_sensor_gyro",
                    &SignalType::Vec3,
                    Lifecycle::Dynamic,
                )
                .with_required(false),
            )
            .signal(
                "Vehicle.Aero.alpha",
                SignalType::Double,
                Lifecycle::Dynamic,
                "rad",
            )
            .signal("Vehicle.mass", SignalType::Double, Lifecycle::Static, "kg")
            .build()
            .unwrap()
    }

    #[test]
    fn the_upstream_policy_drops_debug_and_raw_sensors_and_packs_the_rest() {
        let policy = RecordingPolicy {
            exclude: vec!["Debug.*".into(), "*.raw_sensor_*".into()],
            ..RecordingPolicy::default()
        }
        .compile()
        .unwrap();
        let full = full();
        let sel = policy.select(&full).unwrap();
        let names: Vec<&str> = sel
            .schema
            .doc()
            .signals
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(
            names,
            ["Vehicle.Nav.position", "Vehicle.Aero.alpha", "Vehicle.mass"]
        );
        assert_eq!(
            sel.schema.placed("Vehicle.Aero.alpha").map(|p| p.offset),
            Some(24)
        );
        assert!(sel.schema.doc().compatibility.warmstart_compatible);
        let full_payload: Vec<u8> = (0..full.layout().dynamic_size as u8).collect();
        let mut out = Vec::new();
        sel.project_dynamic(&full_payload, &mut out).unwrap();
        assert_eq!(&out[..24], &full_payload[..24]);
        let alpha = full.placed("Vehicle.Aero.alpha").unwrap().offset;
        assert_eq!(&out[24..], &full_payload[alpha..alpha + 8]);
        assert_eq!(sel.spec.exclude, ["Debug.*", "*.raw_sensor_*"]);
    }

    #[test]
    fn excluding_a_required_input_refuses_to_start_unless_warmstart_is_off() {
        let full = full();
        let mut p = RecordingPolicy {
            include: vec!["Vehicle.*".into()],
            exclude: vec!["*.alpha".into()],
            warmstart_compatible: true,
        };
        let err = p.compile().unwrap().select(&full).unwrap_err();
        assert_eq!(
            err.to_string(),
            "recording policy excludes signals that warmstart requires (warmstart_compatible is true): Vehicle.Aero.alpha"
        );
        p.warmstart_compatible = false;
        let sel = p.compile().unwrap().select(&full).unwrap();
        assert!(!sel.schema.doc().compatibility.warmstart_compatible);
        assert!(sel.schema.placed("Vehicle.Aero.alpha").is_none());
        assert!(sel.schema.placed("Vehicle.IMU.raw_sensor_gyro").is_some());
    }

    #[test]
    fn bad_patterns_are_named() {
        let p = RecordingPolicy {
            exclude: vec!["Debug.[".into()],
            ..RecordingPolicy::default()
        };
        assert!(p.compile().unwrap_err().to_string().contains("Debug.["));
    }
}
