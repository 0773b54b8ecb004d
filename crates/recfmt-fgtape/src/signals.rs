//! The signal layout of a frame, derived from a flight-recorder configuration tree.
//!
//! FlightGear's `FGFlightRecorder::reinit` walks the configuration once per signal type, in
//! the fixed order `double`, `float`, `int`, `int16`, `int8`, `bool`. Each walk visits
//! `signal[0]`, `signal[1]`, ... up to the first missing index, then recurses into every child
//! called `signals`, in child order. The frame's signal block stores the six lists back to
//! back, without padding: f64, f32, i32, i16, i8 values, then the bools packed 8 to a byte,
//! least significant bit first.
//!
//! ```
//! use recfmt_fgtape::props::PropertyList;
//! use recfmt_fgtape::signals::{SignalLayout, SignalValue};
//!
//! let config = PropertyList::parse(r#"<PropertyList><signals>
//!   <signal><type type="string">bool</type><property type="string">/gear[0]/down[0]</property></signal>
//!   <signal n="1"><type type="string">double</type><property type="string">/position[0]/altitude-ft[0]</property></signal>
//! </signals></PropertyList>"#)?;
//! let layout = SignalLayout::from_config(&config.root, &Default::default())?;
//! assert_eq!(layout.record_size(), 8 + 8 + 1);
//! assert_eq!(layout.signals()[0].name(), "/position/altitude-ft");
//! let block = layout.encode(&[SignalValue::Double(1000.0), SignalValue::Bool(true)])?;
//! assert_eq!(layout.decode(&block)?, vec![SignalValue::Double(1000.0), SignalValue::Bool(true)]);
//! # Ok::<(), recfmt_fgtape::Error>(())
//! ```

use std::collections::HashSet;
use std::fmt;

use recfmt_core::{DType, Limits, RowWriter};

use crate::error::{Error, Offset, Result};
use crate::props::PropNode;

/// The storage type of a signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SignalType {
    /// 64-bit float.
    Double,
    /// 32-bit float.
    Float,
    /// 32-bit signed integer.
    Int,
    /// 16-bit signed integer (a truncating cast of the property's int value).
    Int16,
    /// 8-bit signed integer (a truncating cast of the property's int value).
    Int8,
    /// One bit.
    Bool,
}

impl SignalType {
    /// All types, in frame order.
    pub const ALL: [SignalType; 6] = [
        SignalType::Double,
        SignalType::Float,
        SignalType::Int,
        SignalType::Int16,
        SignalType::Int8,
        SignalType::Bool,
    ];

    /// The name used in configuration trees (`double`, `float`, `int`, `int16`, `int8`, `bool`).
    pub fn name(self) -> &'static str {
        match self {
            SignalType::Double => "double",
            SignalType::Float => "float",
            SignalType::Int => "int",
            SignalType::Int16 => "int16",
            SignalType::Int8 => "int8",
            SignalType::Bool => "bool",
        }
    }

    /// Parses a configuration type name (exact match, like FlightGear's `strcmp`).
    pub fn parse(name: &str) -> Option<SignalType> {
        SignalType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The matching recfmt dtype.
    pub fn dtype(self) -> DType {
        match self {
            SignalType::Double => DType::F64,
            SignalType::Float => DType::F32,
            SignalType::Int => DType::I32,
            SignalType::Int16 => DType::I16,
            SignalType::Int8 => DType::I8,
            SignalType::Bool => DType::Bool,
        }
    }

    fn slot(self) -> usize {
        self as usize
    }
}

impl fmt::Display for SignalType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How FlightGear interpolates a signal between two frames during replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Interpolation {
    /// Take the newer frame's value.
    Discrete,
    /// Linear interpolation.
    Linear,
    /// Angle in radians, interpolated the short way round (`angular` is read as this).
    AngularRad,
    /// Angle in degrees, interpolated the short way round.
    AngularDeg,
}

impl Interpolation {
    /// The tag FlightGear writes.
    pub fn name(self) -> &'static str {
        match self {
            Interpolation::Discrete => "discrete",
            Interpolation::Linear => "linear",
            Interpolation::AngularRad => "angular-rad",
            Interpolation::AngularDeg => "angular-deg",
        }
    }

    /// Parses a tag; `angular` means `angular-rad`. Unknown tags give `None` (FlightGear
    /// falls back to linear).
    pub fn parse(name: &str) -> Option<Interpolation> {
        Some(match name {
            "discrete" => Interpolation::Discrete,
            "linear" => Interpolation::Linear,
            "angular" | "angular-rad" => Interpolation::AngularRad,
            "angular-deg" => Interpolation::AngularDeg,
            _ => return None,
        })
    }
}

/// One recorded signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signal {
    /// Property path as stored (e.g. `/position[0]/altitude-ft[0]`), after any template
    /// expansion.
    pub property: String,
    /// Storage type.
    pub ty: SignalType,
    /// Replay interpolation.
    pub interpolation: Interpolation,
}

impl Signal {
    /// The property path with every `[0]` removed (`/engines/engine[1]/running`).
    pub fn name(&self) -> String {
        simplify_path(&self.property)
    }
}

/// Removes `[0]` index steps from a property path.
pub fn simplify_path(path: &str) -> String {
    path.replace("[0]", "")
}

/// A decoded signal value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SignalValue {
    /// A `double` signal.
    Double(f64),
    /// A `float` signal.
    Float(f32),
    /// An `int` signal.
    Int(i32),
    /// An `int16` signal.
    Int16(i16),
    /// An `int8` signal.
    Int8(i8),
    /// A `bool` signal.
    Bool(bool),
}

impl SignalValue {
    /// The type of this value.
    pub fn ty(self) -> SignalType {
        match self {
            SignalValue::Double(_) => SignalType::Double,
            SignalValue::Float(_) => SignalType::Float,
            SignalValue::Int(_) => SignalType::Int,
            SignalValue::Int16(_) => SignalType::Int16,
            SignalValue::Int8(_) => SignalType::Int8,
            SignalValue::Bool(_) => SignalType::Bool,
        }
    }

    /// The value widened to `f64`.
    pub fn as_f64(self) -> f64 {
        match self {
            SignalValue::Double(v) => v,
            SignalValue::Float(v) => f64::from(v),
            SignalValue::Int(v) => f64::from(v),
            SignalValue::Int16(v) => f64::from(v),
            SignalValue::Int8(v) => f64::from(v),
            SignalValue::Bool(v) => f64::from(u8::from(v)),
        }
    }
}

/// The frame layout: signals in frame order and the byte position of each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalLayout {
    signals: Vec<Signal>,
    /// Byte offset in the signal block (bit index for bools).
    positions: Vec<usize>,
    counts: [usize; 6],
    block_len: usize,
    warnings: Vec<String>,
}

impl SignalLayout {
    /// Builds the layout the way FlightGear does from a configuration node (the root of a
    /// Normal tape's Config container, or the `signals` node of a Continuous header).
    ///
    /// Signals whose type is not one of the six are ignored, as are empty properties and
    /// properties already recorded (compared after removing `[0]` steps). `count`, `prefix`
    /// and `%i` templates are expanded.
    pub fn from_config(config: &PropNode, limits: &Limits) -> Result<Self> {
        let mut lists: [Vec<Signal>; 6] = Default::default();
        let mut seen = HashSet::new();
        let mut warnings = Vec::new();
        let mut total = 0u64;
        for ty in SignalType::ALL {
            let mut walk = Walk {
                ty,
                list: &mut lists[ty.slot()],
                seen: &mut seen,
                warnings: &mut warnings,
                total: &mut total,
                limits,
            };
            walk.process(config, String::new(), 1, 0)?;
        }
        Ok(Self::from_lists(lists, warnings))
    }

    /// Builds a layout from signals given in any order; they are stably sorted into frame
    /// order (by type).
    pub fn from_signals(signals: impl IntoIterator<Item = Signal>) -> Self {
        let mut lists: [Vec<Signal>; 6] = Default::default();
        for s in signals {
            lists[s.ty.slot()].push(s);
        }
        Self::from_lists(lists, Vec::new())
    }

    fn from_lists(lists: [Vec<Signal>; 6], warnings: Vec<String>) -> Self {
        let counts = [0, 1, 2, 3, 4, 5].map(|i| lists[i].len());
        let mut positions = Vec::with_capacity(counts.iter().sum());
        let mut offset = 0usize;
        for (ty, list) in SignalType::ALL.into_iter().zip(&lists) {
            let size = match ty {
                SignalType::Double => 8,
                SignalType::Float | SignalType::Int => 4,
                SignalType::Int16 => 2,
                SignalType::Int8 => 1,
                SignalType::Bool => 0,
            };
            for i in 0..list.len() {
                if ty == SignalType::Bool {
                    positions.push(offset * 8 + i);
                } else {
                    positions.push(offset + i * size);
                }
            }
            if ty == SignalType::Bool {
                offset += list.len().div_ceil(8);
            } else {
                offset += list.len() * size;
            }
        }
        SignalLayout {
            signals: lists.into_iter().flatten().collect(),
            positions,
            counts,
            block_len: offset,
            warnings,
        }
    }

    /// The signals in frame order.
    pub fn signals(&self) -> &[Signal] {
        &self.signals
    }

    /// How many signals of a type there are.
    pub fn count(&self, ty: SignalType) -> usize {
        self.counts[ty.slot()]
    }

    /// Length of the signal block: `record_size - 8`.
    pub fn block_len(&self) -> usize {
        self.block_len
    }

    /// FlightGear's record size: 8 bytes of time plus the signal block.
    pub fn record_size(&self) -> usize {
        self.block_len + 8
    }

    /// Notes about signals FlightGear would ignore (unknown types, duplicates).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Decodes signal `i` from a signal block; `None` when `i` is out of range or the block
    /// is too short.
    #[inline]
    pub fn value(&self, block: &[u8], i: usize) -> Option<SignalValue> {
        let ty = self.signals.get(i)?.ty;
        let p = *self.positions.get(i)?;
        Some(match ty {
            SignalType::Double => SignalValue::Double(f64::from_le_bytes(take(block, p)?)),
            SignalType::Float => SignalValue::Float(f32::from_le_bytes(take(block, p)?)),
            SignalType::Int => SignalValue::Int(i32::from_le_bytes(take(block, p)?)),
            SignalType::Int16 => SignalValue::Int16(i16::from_le_bytes(take(block, p)?)),
            SignalType::Int8 => SignalValue::Int8(i8::from_le_bytes(take(block, p)?)),
            SignalType::Bool => SignalValue::Bool(block.get(p >> 3)? & (1 << (p & 7)) != 0),
        })
    }

    /// Checks that a signal block holds the whole layout (longer blocks are fine: the
    /// Continuous `signals` item carries 8 unused bytes after it).
    pub fn check_block(&self, block: &[u8]) -> Result<()> {
        if block.len() < self.block_len {
            return Err(Error::invalid(format!(
                "signal block has {} bytes, the layout needs {}",
                block.len(),
                self.block_len
            )));
        }
        Ok(())
    }

    /// Decodes a whole signal block into `out` (cleared first).
    pub fn decode_into(&self, block: &[u8], out: &mut Vec<SignalValue>) -> Result<()> {
        self.check_block(block)?;
        out.clear();
        out.extend((0..self.signals.len()).filter_map(|i| self.value(block, i)));
        Ok(())
    }

    /// Pushes the values of a whole signal block to `row`, one per signal in frame order,
    /// each in its own type (a signal a projection left out is skipped, not decoded): the one
    /// decoding of a frame's signals for both the row and the column views, through
    /// [`SignalLayout::value`] as every other reader of a block. Fails when the block is
    /// shorter than the layout.
    pub fn write_row(&self, block: &[u8], row: &mut RowWriter<'_>) -> recfmt_core::Result<()> {
        self.check_block(block)?;
        for i in 0..self.signals.len() {
            if !row.wants_next() {
                row.skip()?;
                continue;
            }
            match self.value(block, i) {
                Some(SignalValue::Double(x)) => row.push(x)?,
                Some(SignalValue::Float(x)) => row.push(x)?,
                Some(SignalValue::Int(x)) => row.push(x)?,
                Some(SignalValue::Int16(x)) => row.push(x)?,
                Some(SignalValue::Int8(x)) => row.push(x)?,
                Some(SignalValue::Bool(x)) => row.push(x)?,
                // Unreachable after the length check.
                None => row.push_null()?,
            }
        }
        Ok(())
    }

    /// Decodes a whole signal block.
    pub fn decode(&self, block: &[u8]) -> Result<Vec<SignalValue>> {
        let mut out = Vec::with_capacity(self.signals.len());
        self.decode_into(block, &mut out)?;
        Ok(out)
    }

    /// Encodes values (one per signal, in frame order, of the signal's type) into a signal
    /// block. Unused bits of the last bool byte are zero.
    pub fn encode(&self, values: &[SignalValue]) -> Result<Vec<u8>> {
        if values.len() != self.signals.len() {
            return Err(Error::invalid(format!(
                "{} values given for {} signals",
                values.len(),
                self.signals.len()
            )));
        }
        let mut block = vec![0u8; self.block_len];
        for (i, (value, signal)) in values.iter().zip(&self.signals).enumerate() {
            if value.ty() != signal.ty {
                return Err(Error::invalid(format!(
                    "signal {} ({}) is {}, got a {} value",
                    i,
                    signal.property,
                    signal.ty,
                    value.ty()
                )));
            }
            let p = self.positions[i];
            match *value {
                SignalValue::Double(v) => block[p..p + 8].copy_from_slice(&v.to_le_bytes()),
                SignalValue::Float(v) => block[p..p + 4].copy_from_slice(&v.to_le_bytes()),
                SignalValue::Int(v) => block[p..p + 4].copy_from_slice(&v.to_le_bytes()),
                SignalValue::Int16(v) => block[p..p + 2].copy_from_slice(&v.to_le_bytes()),
                SignalValue::Int8(v) => block[p] = v.to_le_bytes()[0],
                SignalValue::Bool(v) => {
                    if v {
                        block[p >> 3] |= 1 << (p & 7);
                    }
                }
            }
        }
        Ok(block)
    }
}

fn take<const N: usize>(block: &[u8], p: usize) -> Option<[u8; N]> {
    block.get(p..p.checked_add(N)?)?.try_into().ok()
}

struct Walk<'a> {
    ty: SignalType,
    list: &'a mut Vec<Signal>,
    seen: &'a mut HashSet<String>,
    warnings: &'a mut Vec<String>,
    total: &'a mut u64,
    limits: &'a Limits,
}

impl Walk<'_> {
    fn process(&mut self, node: &PropNode, prefix: String, count: i32, depth: usize) -> Result<()> {
        if depth > crate::props::MAX_DEPTH {
            return Err(Error::invalid("signal lists nested too deeply"));
        }
        let count = node
            .get("count")
            .and_then(PropNode::int_value)
            .unwrap_or(count);
        let mut prefix = node
            .get("prefix")
            .and_then(PropNode::string_value)
            .map_or(prefix, |p| p.trim().to_owned());
        if !prefix.is_empty() && !prefix.ends_with('/') {
            prefix.push('/');
        }
        let by_index: std::collections::HashMap<u32, &PropNode> = node
            .children_named("signal")
            .map(|c| (c.index, c))
            .collect();
        let mut index = 0u32;
        while let Some(&signal) = by_index.get(&index) {
            index += 1;
            let type_name = signal
                .get("type")
                .and_then(PropNode::string_value)
                .unwrap_or("float");
            if type_name != self.ty.name() {
                if self.ty == SignalType::Double && SignalType::parse(type_name).is_none() {
                    self.warn(format!(
                        "signal[{}] has unknown type {type_name:?} and is not recorded",
                        index - 1
                    ));
                }
                continue;
            }
            let property = signal
                .get("property")
                .and_then(PropNode::string_value)
                .unwrap_or("");
            if property.is_empty() {
                continue;
            }
            let path = format!("{prefix}{property}");
            let interpolation_name = signal
                .get("interpolation")
                .and_then(PropNode::string_value)
                .unwrap_or("linear");
            let interpolation = Interpolation::parse(interpolation_name).unwrap_or_else(|| {
                self.warn(format!(
                    "unsupported interpolation {interpolation_name:?} for {path}, using linear"
                ));
                Interpolation::Linear
            });
            let expansions = if path.contains("%i") { count.max(0) } else { 1 };
            for i in 0..expansions {
                let expanded = if path.contains("%i") {
                    path.replacen("%i", &i.to_string(), 1)
                } else {
                    path.clone()
                };
                if !self.seen.insert(normalise(&expanded)) {
                    self.warn(format!(
                        "property {expanded} specified multiple times; dropped"
                    ));
                    continue;
                }
                *self.total += 1;
                Error::check_limit(
                    "signals",
                    *self.total,
                    self.limits.max_signals,
                    Offset::File(0),
                )?;
                self.list.push(Signal {
                    property: expanded,
                    ty: self.ty,
                    interpolation,
                });
            }
        }
        for child in node.children_named("signals") {
            self.process(child, prefix.clone(), count, depth + 1)?;
        }
        Ok(())
    }

    fn warn(&mut self, message: String) {
        if self.warnings.len() < 100 {
            self.warnings.push(message);
        }
    }
}

/// A key under which two paths naming the same property compare equal.
pub(crate) fn normalise(path: &str) -> String {
    simplify_path(path)
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::props::PropertyList;

    fn layout(xml: &str) -> SignalLayout {
        let t = PropertyList::parse(xml).unwrap();
        SignalLayout::from_config(&t.root, &Limits::default()).unwrap()
    }

    #[test]
    fn order_gaps_duplicates_and_templates() {
        let l = layout(
            r#"<PropertyList><signals>
              <signal><property>/a</property></signal>
              <signal n="1"><type>int8</type><property>/b</property></signal>
              <signal n="2"><type>bool</type><property>/a[0]</property></signal>
              <signal n="4"><type>double</type><property>/after-gap</property></signal>
              <signals>
                <count type="int">2</count>
                <prefix>/eng</prefix>
                <signal><type>double</type><property>e[%i]/rpm</property></signal>
                <signal n="1"><type>string</type><property>/s</property></signal>
              </signals>
            </signals></PropertyList>"#,
        );
        let names: Vec<_> = l
            .signals()
            .iter()
            .map(|s| (s.ty, s.property.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![
                (SignalType::Double, "/eng/e[0]/rpm"),
                (SignalType::Double, "/eng/e[1]/rpm"),
                (SignalType::Float, "/a"),
                (SignalType::Int8, "/b"),
            ]
        );
        assert_eq!(l.record_size(), 8 + 16 + 4 + 1);
        assert_eq!(l.warnings().len(), 2, "{:?}", l.warnings());
    }

    #[test]
    fn bools_pack_lsb_first_without_padding() {
        let mut xml = String::from("<PropertyList><signals>");
        for i in 0..10 {
            xml.push_str(&format!(
                "<signal n=\"{i}\"><type>bool</type><property>/b{i}</property></signal>"
            ));
        }
        xml.push_str("<signal n=\"10\"><type>int16</type><property>/s</property></signal>");
        xml.push_str("</signals></PropertyList>");
        let l = layout(&xml);
        assert_eq!(l.block_len(), 2 + 2);
        let mut values = vec![SignalValue::Int16(-2)];
        values.extend((0..10).map(|i| SignalValue::Bool(i == 0 || i == 9)));
        let block = l.encode(&values).unwrap();
        assert_eq!(block, vec![0xfe, 0xff, 0b0000_0001, 0b0000_0010]);
        assert_eq!(l.decode(&block).unwrap(), values);
        assert!(l.decode(&block[..3]).is_err());
        assert!(l.encode(&values[1..]).is_err());
    }
}
