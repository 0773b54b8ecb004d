//! `schema.json`: the document as stored, and the validated byte layout derived from it.

use std::collections::HashMap;
use std::path::Path;

use semver::Version;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::checksum::schema_checksum;
use crate::error::{Error, Result};
use crate::json_pos;
use crate::time::TimeSpec;
use crate::types::SignalType;

/// File name of the schema inside a recording directory.
pub const SCHEMA_FILE: &str = "schema.json";

/// Whether a signal is recorded once (`static_signals.bin`) or every frame
/// (`dynamic_signals.bin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lifecycle {
    /// Recorded once, in the static block.
    Static,
    /// Recorded in every frame.
    Dynamic,
}

impl Lifecycle {
    /// `static` or `dynamic`.
    pub fn name(self) -> &'static str {
        match self {
            Lifecycle::Static => "static",
            Lifecycle::Dynamic => "dynamic",
        }
    }
}

/// One entry of `signals[]`, exactly as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignalSpec {
    /// Dotted name (`Vehicle.Nav.position`).
    pub name: String,
    /// Type name as written (see [`SignalType::parse`] for the accepted spellings).
    #[serde(rename = "type")]
    pub type_name: String,
    /// Physical unit (`m`, `rad`, `""` for none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<String>,
    /// `static` or `dynamic`.
    pub lifecycle: Lifecycle,
    /// Byte offset inside its lifecycle's payload (dynamic: after the 8-byte time; static:
    /// from the start of `static_signals.bin`).
    pub offset: u64,
    /// Size in bytes; must agree with the type.
    pub size: u64,
    /// `boolean`, `enum`, ... (upstream's `SignalDescriptor.semantic`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic: Option<String>,
    /// Names of enum values (kept as written: an object or an array).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Value>,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Value to use when a recording lacks this signal (our extension; a number, a boolean, or
    /// an array of numbers for composite types).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// Whether warmstart needs this signal (our extension; absent means `true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Members this crate does not know, kept for round trips and the checksum.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SignalSpec {
    /// A signal with the given type, no unit and offset 0 (the [`SchemaBuilder`] assigns
    /// offsets).
    pub fn new(name: impl Into<String>, ty: &SignalType, lifecycle: Lifecycle) -> Self {
        SignalSpec {
            name: name.into(),
            type_name: ty.name().to_string(),
            units: None,
            lifecycle,
            offset: 0,
            size: ty.size().unwrap_or(0),
            semantic: None,
            enum_values: None,
            description: None,
            default: None,
            required: None,
            extra: Map::new(),
        }
    }

    /// Sets the unit.
    pub fn with_units(mut self, units: impl Into<String>) -> Self {
        self.units = Some(units.into());
        self
    }

    /// Sets the semantic (`boolean`, `enum`, ...).
    pub fn with_semantic(mut self, semantic: impl Into<String>) -> Self {
        self.semantic = Some(semantic.into());
        self
    }

    /// Sets the default value.
    pub fn with_default(mut self, default: Value) -> Self {
        self.default = Some(default);
        self
    }

    /// Sets whether warmstart requires the signal.
    pub fn with_required(mut self, required: bool) -> Self {
        self.required = Some(required);
        self
    }

    /// Whether warmstart needs this signal (`required`, default `true`).
    pub fn is_required(&self) -> bool {
        self.required.unwrap_or(true)
    }
}

/// One entry of `components[]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComponentSpec {
    /// Component name (`Vehicle.EOM`).
    pub name: String,
    /// Component type (`RigidBody6DOF`).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    /// First element of this component's state in the simulator's state vector.
    pub state_offset: u64,
    /// Number of f64 state elements (not bytes: 13 for a rigid body).
    pub state_size: u64,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `compatibility` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compatibility {
    /// Oldest Icarus whose recordings this schema can use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_icarus_version: Option<Version>,
    /// Oldest recording `schema_version` this schema can use (our extension).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_schema_version: Option<Version>,
    /// Whether the recording holds everything a warmstart needs.
    #[serde(default = "yes")]
    pub warmstart_compatible: bool,
    /// Breaking changes: strings, or objects `{signal, since, description}`.
    #[serde(default)]
    pub breaking_changes: Vec<Value>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn yes() -> bool {
    true
}

impl Default for Compatibility {
    fn default() -> Self {
        Compatibility {
            min_icarus_version: None,
            min_schema_version: None,
            warmstart_compatible: true,
            breaking_changes: Vec::new(),
            extra: Map::new(),
        }
    }
}

/// `schema.json` as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchemaDoc {
    /// Version of the signal schema.
    pub schema_version: Version,
    /// Version of the simulator that recorded.
    pub icarus_version: Version,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// How `t` maps onto absolute time (may also sit in `metadata.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<TimeSpec>,
    /// The signals.
    pub signals: Vec<SignalSpec>,
    /// Components and their state slices.
    #[serde(default)]
    pub components: Vec<ComponentSpec>,
    /// Compatibility information.
    #[serde(default)]
    pub compatibility: Compatibility,
    /// `sha256:<hex>` of the canonical schema without this member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl SchemaDoc {
    /// An empty schema.
    pub fn new(schema_version: Version, icarus_version: Version, created_at: &str) -> Self {
        SchemaDoc {
            schema_version,
            icarus_version,
            created_at: created_at.to_string(),
            time: None,
            signals: Vec::new(),
            components: Vec::new(),
            compatibility: Compatibility::default(),
            checksum: None,
            extra: Map::new(),
        }
    }

    /// The checksum this document should carry (computed over everything but `checksum`).
    pub fn compute_checksum(&self) -> String {
        schema_checksum(&serde_json::to_value(self).unwrap_or(Value::Null))
    }

    /// The pretty JSON text our writer stores (two-space indent, trailing newline).
    pub fn to_json_text(&self) -> Result<String> {
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::invalid(format!("schema.json cannot be written: {e}")))?;
        text.push('\n');
        Ok(text)
    }

    /// The signal called `name`.
    pub fn signal(&self, name: &str) -> Option<&SignalSpec> {
        self.signals.iter().find(|s| s.name == name)
    }
}

/// Options for validating a schema.
#[derive(Debug, Clone, Copy, Default)]
pub struct SchemaOptions {
    /// Keep signals of unknown types as opaque bytes of their declared size instead of failing.
    pub skip_unknown_types: bool,
    /// Most signals accepted.
    pub max_signals: Option<u64>,
    /// Largest payload (static or dynamic) accepted, in bytes.
    pub max_payload: Option<u64>,
}

/// One signal placed in its payload.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    /// Index in [`SchemaDoc::signals`].
    pub index: usize,
    /// The parsed type.
    pub ty: SignalType,
    /// Static or dynamic.
    pub lifecycle: Lifecycle,
    /// Byte offset in its payload.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
}

impl Placed {
    /// The signal's bytes in a payload of its lifecycle.
    pub fn slot<'a>(&self, payload: &'a [u8]) -> &'a [u8] {
        payload
            .get(self.offset..self.offset + self.size)
            .unwrap_or(&[])
    }
}

/// A column of the expanded view: a scalar signal, or one element of a composite one.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Column name: the signal name, or `signal.suffix` for composite elements.
    pub name: String,
    /// Index into [`Layout::placed`].
    pub signal: usize,
    /// Element of the signal (0 for scalars).
    pub element: usize,
}

/// What a name refers to: a whole signal or one expanded column of a composite one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// A whole signal (index into [`Layout::placed`]).
    Signal(usize),
    /// Element `element` of composite signal `signal`.
    Element {
        /// Index into [`Layout::placed`].
        signal: usize,
        /// Element index (`x` = 0, ...).
        element: usize,
    },
}

/// The validated byte layout of a schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Every signal with its parsed type and place, in schema order.
    pub placed: Vec<Placed>,
    /// Dynamic payload size `D` (frame stride is `8 + D`).
    pub dynamic_size: usize,
    /// Static block size `S` (the exact length of `static_signals.bin`).
    pub static_size: usize,
    /// Expanded columns of the dynamic signals, in schema order.
    pub dynamic_columns: Vec<Column>,
    /// Expanded columns of the static signals, in schema order.
    pub static_columns: Vec<Column>,
    names: HashMap<String, Lookup>,
}

impl Layout {
    /// Bytes per frame: the 8-byte time plus the dynamic payload.
    pub fn stride(&self) -> usize {
        8 + self.dynamic_size
    }

    /// Looks a name up: a signal, or an expanded column such as `Vehicle.Nav.position.x`.
    pub fn lookup(&self, name: &str) -> Option<Lookup> {
        self.names.get(name).copied()
    }

    /// The placed signal called `name` (whole signals only, not expanded columns).
    pub fn placed_by_name(&self, name: &str) -> Option<&Placed> {
        match self.lookup(name)? {
            Lookup::Signal(i) => self.placed.get(i),
            Lookup::Element { .. } => None,
        }
    }
}

/// A validated schema: the stored document plus its byte layout.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    doc: SchemaDoc,
    layout: Layout,
}

impl Schema {
    /// Validates a document (types, sizes, offsets, names).
    pub fn from_doc(doc: SchemaDoc, options: &SchemaOptions) -> Result<Self> {
        let layout = build_layout(&doc, options, &|_| 0, Path::new(SCHEMA_FILE))?;
        Ok(Schema { doc, layout })
    }

    /// Parses and validates `schema.json` text. Errors name `path` and the byte offset of the
    /// offending member. Returns the schema and the document as a plain JSON value (for the
    /// checksum, which covers members this crate does not know too).
    pub fn parse(text: &[u8], path: &Path, options: &SchemaOptions) -> Result<(Self, Value)> {
        let json_err = |e: serde_json::Error, what: &str| {
            let offset = json_pos::offset_of(text, e.line(), e.column());
            Error::malformed(
                path,
                offset,
                format!(
                    "{what} (line {}, column {}: {})",
                    e.line(),
                    e.column(),
                    strip_position(&e)
                ),
            )
        };
        let raw: Value = serde_json::from_slice(text).map_err(|e| json_err(e, "valid JSON"))?;
        if !raw.is_object() {
            return Err(Error::malformed(path, 0, "a JSON object"));
        }
        let positions = json_pos::scan(text, "signals");
        if let Some(max) = options.max_signals {
            let n = raw
                .get("signals")
                .and_then(Value::as_array)
                .map_or(0, Vec::len) as u64;
            recfmt_core::Limits::check("signals", n, max, positions.key("signals"))?;
        }
        let doc: SchemaDoc =
            serde_json::from_slice(text).map_err(|e| json_err(e, "a schema.json document"))?;
        let layout = build_layout(&doc, options, &|i| positions.element(i), path)?;
        Ok((Schema { doc, layout }, raw))
    }

    /// The document.
    pub fn doc(&self) -> &SchemaDoc {
        &self.doc
    }

    /// The byte layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Gives the document back.
    pub fn into_doc(self) -> SchemaDoc {
        self.doc
    }

    /// The spec of a placed signal.
    pub fn spec(&self, placed: &Placed) -> &SignalSpec {
        &self.doc.signals[placed.index]
    }

    /// The placed signal called `name` (whole signals only, not expanded columns).
    pub fn placed(&self, name: &str) -> Option<&Placed> {
        self.layout.placed_by_name(name)
    }

    /// Returns a copy whose `checksum` member is the computed checksum.
    pub fn with_checksum(mut self) -> Self {
        self.doc.checksum = Some(self.doc.compute_checksum());
        self
    }
}

/// serde_json appends " at line L column C"; the caller reports the position itself.
fn strip_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

fn build_layout(
    doc: &SchemaDoc,
    options: &SchemaOptions,
    offset_of: &dyn Fn(usize) -> u64,
    path: &Path,
) -> Result<Layout> {
    let bad = |i: usize, what: String| {
        let name = doc.signals.get(i).map_or("", |s| s.name.as_str());
        Error::malformed(
            path,
            offset_of(i),
            format!("signals[{i}] ({name:?}): {what}"),
        )
    };
    let max_payload = options.max_payload.unwrap_or(u64::MAX);
    let mut placed = Vec::with_capacity(doc.signals.len());
    let mut names: HashMap<String, Lookup> = HashMap::with_capacity(doc.signals.len());
    for (i, spec) in doc.signals.iter().enumerate() {
        if spec.name.is_empty() {
            return Err(bad(i, "a non-empty signal name".into()));
        }
        let ty = match SignalType::parse(&spec.type_name) {
            Some(t) => t,
            None if options.skip_unknown_types => SignalType::Opaque(spec.type_name.clone()),
            None => {
                return Err(bad(
                    i,
                    format!(
                        "a known type (double, int64, int32, bool, Vec3<double>, Quat<double>, Mat3<double>), found {:?}",
                        spec.type_name
                    ),
                ));
            }
        };
        match ty.size() {
            Some(size) if size != spec.size => {
                return Err(bad(
                    i,
                    format!(
                        "size {size} for type {}, found {}",
                        spec.type_name, spec.size
                    ),
                ));
            }
            None if spec.size == 0 => {
                return Err(bad(i, "a non-zero size for an unknown type".into()));
            }
            _ => {}
        }
        let end = spec
            .offset
            .checked_add(spec.size)
            .filter(|&e| e <= max_payload)
            .ok_or_else(|| {
                bad(
                    i,
                    format!(
                        "offset + size within the payload limit of {max_payload} bytes, found {} + {}",
                        spec.offset, spec.size
                    ),
                )
            })?;
        let (offset, size) = match (usize::try_from(spec.offset), usize::try_from(spec.size)) {
            (Ok(o), Ok(s)) if usize::try_from(end).is_ok() => (o, s),
            _ => return Err(bad(i, "an offset that fits in memory".into())),
        };
        let index = placed.len();
        if names
            .insert(spec.name.clone(), Lookup::Signal(index))
            .is_some()
        {
            return Err(bad(i, "a unique signal name, found a duplicate".into()));
        }
        for (element, suffix) in ty.components().iter().enumerate() {
            let column = format!("{}.{suffix}", spec.name);
            let lookup = Lookup::Element {
                signal: index,
                element,
            };
            if names.insert(column.clone(), lookup).is_some() {
                return Err(bad(
                    i,
                    format!("expanded column {column:?} not to collide with another signal"),
                ));
            }
        }
        placed.push(Placed {
            index: i,
            ty,
            lifecycle: spec.lifecycle,
            offset,
            size,
        });
    }
    // A composite's expanded column may be declared before the composite; check the other
    // direction too.
    for (index, p) in placed.iter().enumerate() {
        if let Some(Lookup::Element { signal, .. }) = names.get(&doc.signals[p.index].name)
            && *signal != index
        {
            return Err(bad(
                p.index,
                "a name that is not an expanded column of a composite signal".into(),
            ));
        }
    }

    let mut dynamic_size = 0;
    let mut static_size = 0;
    for lifecycle in [Lifecycle::Dynamic, Lifecycle::Static] {
        let mut spans: Vec<&Placed> = placed.iter().filter(|p| p.lifecycle == lifecycle).collect();
        spans.sort_by_key(|p| (p.offset, p.index));
        let mut end = 0usize;
        let mut last: Option<&Placed> = None;
        for p in spans {
            if let Some(prev) = last
                && p.offset < end
            {
                return Err(bad(
                    p.index,
                    format!(
                        "{} bytes {}..{} not to overlap signals[{}] ({:?}, bytes {}..{})",
                        lifecycle.name(),
                        p.offset,
                        p.offset + p.size,
                        prev.index,
                        doc.signals[prev.index].name,
                        prev.offset,
                        prev.offset + prev.size
                    ),
                ));
            }
            if p.offset + p.size >= end {
                end = p.offset + p.size;
                last = Some(p);
            }
        }
        match lifecycle {
            Lifecycle::Dynamic => dynamic_size = end,
            Lifecycle::Static => static_size = end,
        }
    }

    let columns = |lifecycle: Lifecycle| -> Vec<Column> {
        let mut out = Vec::new();
        for (index, p) in placed.iter().enumerate() {
            if p.lifecycle != lifecycle {
                continue;
            }
            let name = &doc.signals[p.index].name;
            if p.ty.is_composite() {
                for (element, suffix) in p.ty.components().iter().enumerate() {
                    out.push(Column {
                        name: format!("{name}.{suffix}"),
                        signal: index,
                        element,
                    });
                }
            } else if p.ty.column_count() == 1 {
                out.push(Column {
                    name: name.clone(),
                    signal: index,
                    element: 0,
                });
            }
        }
        out
    };
    Ok(Layout {
        dynamic_columns: columns(Lifecycle::Dynamic),
        static_columns: columns(Lifecycle::Static),
        placed,
        dynamic_size,
        static_size,
        names,
    })
}

/// Builds a schema signal by signal, assigning offsets by packing each lifecycle's signals in
/// order.
///
/// ```
/// use recfmt_icarec::{Lifecycle, SchemaBuilder, SignalType};
/// let schema = SchemaBuilder::new("1.0.0", "0.5.0", "2026-02-16T12:00:00Z")?
///     .signal("Vehicle.Nav.position", SignalType::Vec3, Lifecycle::Dynamic, "m")
///     .signal("Vehicle.Aero.alpha", SignalType::Double, Lifecycle::Dynamic, "rad")
///     .signal("Vehicle.mass", SignalType::Double, Lifecycle::Static, "kg")
///     .build()?;
/// assert_eq!(schema.placed("Vehicle.Aero.alpha").map(|p| p.offset), Some(24));
/// assert_eq!(schema.layout().stride(), 8 + 32);
/// assert_eq!(schema.layout().static_size, 8);
/// # Ok::<(), recfmt_icarec::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct SchemaBuilder {
    doc: SchemaDoc,
}

impl SchemaBuilder {
    /// Starts a schema; both versions must be semver.
    pub fn new(schema_version: &str, icarus_version: &str, created_at: &str) -> Result<Self> {
        let parse = |what: &str, v: &str| {
            Version::parse(v)
                .map_err(|e| Error::invalid(format!("{what} {v:?} is not semver: {e}")))
        };
        Ok(SchemaBuilder {
            doc: SchemaDoc::new(
                parse("schema_version", schema_version)?,
                parse("icarus_version", icarus_version)?,
                created_at,
            ),
        })
    }

    /// Starts from an existing document; its signals keep their offsets.
    pub fn from_doc(doc: SchemaDoc) -> Self {
        SchemaBuilder { doc }
    }

    /// Adds a signal with a unit, placed after the last signal of its lifecycle.
    pub fn signal(self, name: &str, ty: SignalType, lifecycle: Lifecycle, units: &str) -> Self {
        self.spec(SignalSpec::new(name, &ty, lifecycle).with_units(units))
    }

    /// Adds a signal spec, placed after the last signal of its lifecycle (its `offset` is
    /// overwritten).
    pub fn spec(mut self, mut spec: SignalSpec) -> Self {
        spec.offset = self
            .doc
            .signals
            .iter()
            .filter(|s| s.lifecycle == spec.lifecycle)
            .map(|s| s.offset.saturating_add(s.size))
            .max()
            .unwrap_or(0);
        self.doc.signals.push(spec);
        self
    }

    /// Adds a component.
    pub fn component(
        mut self,
        name: &str,
        type_name: &str,
        state_offset: u64,
        state_size: u64,
    ) -> Self {
        self.doc.components.push(ComponentSpec {
            name: name.to_string(),
            type_name: Some(type_name.to_string()),
            state_offset,
            state_size,
            extra: Map::new(),
        });
        self
    }

    /// Sets the time object.
    pub fn time(mut self, time: TimeSpec) -> Self {
        self.doc.time = Some(time);
        self
    }

    /// Gives access to the document for anything else (compatibility, extra members).
    pub fn doc_mut(&mut self) -> &mut SchemaDoc {
        &mut self.doc
    }

    /// Validates the schema and fills in its checksum.
    pub fn build(self) -> Result<Schema> {
        Ok(Schema::from_doc(self.doc, &SchemaOptions::default())?.with_checksum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(signals: &str) -> String {
        format!(
            r#"{{"schema_version": "1.0.0", "icarus_version": "0.5.0", "created_at": "2026-02-16T12:00:00Z",
  "signals": [{signals}]}}"#
        )
    }

    fn parse(signals: &str) -> Result<Schema> {
        Schema::parse(
            text(signals).as_bytes(),
            Path::new("schema.json"),
            &SchemaOptions::default(),
        )
        .map(|(s, _)| s)
    }

    #[test]
    fn the_upstream_example_parses() {
        let s = parse(
            r#"{"name": "Vehicle.Nav.position", "type": "Vec3<double>", "units": "m", "lifecycle": "dynamic", "offset": 0, "size": 24},
               {"name": "Vehicle.Aero.alpha", "type": "double", "units": "rad", "lifecycle": "dynamic", "offset": 24, "size": 8}"#,
        )
        .unwrap();
        let l = s.layout();
        assert_eq!((l.dynamic_size, l.static_size, l.stride()), (32, 0, 40));
        let names: Vec<&str> = l.dynamic_columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Vehicle.Nav.position.x",
                "Vehicle.Nav.position.y",
                "Vehicle.Nav.position.z",
                "Vehicle.Aero.alpha"
            ]
        );
        assert_eq!(l.lookup("Vehicle.Nav.position"), Some(Lookup::Signal(0)));
        assert_eq!(
            l.lookup("Vehicle.Nav.position.z"),
            Some(Lookup::Element {
                signal: 0,
                element: 2
            })
        );
    }

    #[test]
    fn gaps_are_padding() {
        let s = parse(
            r#"{"name": "a", "type": "double", "lifecycle": "dynamic", "offset": 16, "size": 8}"#,
        )
        .unwrap();
        assert_eq!(s.layout().dynamic_size, 24);
    }

    #[test]
    fn bad_layouts_name_the_signal_and_its_byte_offset() {
        let cases = [
            (
                r#"{"name": "a", "type": "Vec3<double>", "lifecycle": "dynamic", "offset": 0, "size": 16}"#,
                "size 24 for type Vec3<double>, found 16",
            ),
            (
                r#"{"name": "a", "type": "double", "lifecycle": "dynamic", "offset": 0, "size": 8},
                   {"name": "b", "type": "double", "lifecycle": "dynamic", "offset": 4, "size": 8}"#,
                "not to overlap signals[0]",
            ),
            (
                r#"{"name": "a", "type": "float32", "lifecycle": "dynamic", "offset": 0, "size": 4}"#,
                "a known type",
            ),
            (
                r#"{"name": "a", "type": "double", "lifecycle": "dynamic", "offset": 18446744073709551615, "size": 8}"#,
                "within the payload limit",
            ),
            (
                r#"{"name": "a", "type": "double", "lifecycle": "dynamic", "offset": 0, "size": 8},
                   {"name": "a", "type": "double", "lifecycle": "static", "offset": 0, "size": 8}"#,
                "duplicate",
            ),
            (
                r#"{"name": "p.x", "type": "double", "lifecycle": "dynamic", "offset": 0, "size": 8},
                   {"name": "p", "type": "Vec3<double>", "lifecycle": "dynamic", "offset": 8, "size": 24}"#,
                "collide",
            ),
            (
                r#"{"name": "a", "type": "double", "lifecycle": "sometimes", "offset": 0, "size": 8}"#,
                "unknown variant",
            ),
        ];
        for (signals, expected) in cases {
            let full = text(signals);
            let err = parse(signals).unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains(expected), "{msg}");
            assert!(msg.starts_with("schema.json: at byte "), "{msg}");
            let Error::Malformed { offset, .. } = err else {
                panic!("{err:?}")
            };
            assert!(offset > 0 && (offset as usize) < full.len(), "{msg}");
        }
    }

    #[test]
    fn overlap_is_reported_at_the_second_signal() {
        let signals = r#"{"name": "a", "type": "double", "lifecycle": "static", "offset": 0, "size": 8},
                   {"name": "b", "type": "Vec3<double>", "lifecycle": "static", "offset": 8, "size": 24},
                   {"name": "c", "type": "double", "lifecycle": "static", "offset": 16, "size": 8}"#;
        let full = text(signals);
        let Err(Error::Malformed {
            offset, expected, ..
        }) = parse(signals)
        else {
            panic!("expected an overlap error")
        };
        assert!(
            full[offset as usize..].starts_with(r#"{"name": "c""#),
            "{expected}"
        );
        assert!(expected.contains("signals[1]"), "{expected}");
    }

    #[test]
    fn semver_is_enforced() {
        let bad = text("").replace("\"1.0.0\"", "\"v1\"");
        let err = Schema::parse(
            bad.as_bytes(),
            Path::new("schema.json"),
            &SchemaOptions::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("schema.json document"), "{err}");
    }

    #[test]
    fn unknown_types_can_be_skipped_by_size() {
        let signals = r#"{"name": "a", "type": "Vec4<float>", "lifecycle": "dynamic", "offset": 0, "size": 16},
                   {"name": "b", "type": "double", "lifecycle": "dynamic", "offset": 16, "size": 8}"#;
        let options = SchemaOptions {
            skip_unknown_types: true,
            ..SchemaOptions::default()
        };
        let (s, _) =
            Schema::parse(text(signals).as_bytes(), Path::new("schema.json"), &options).unwrap();
        assert_eq!(s.layout().dynamic_size, 24);
        assert_eq!(s.layout().dynamic_columns.len(), 1);
    }
}
