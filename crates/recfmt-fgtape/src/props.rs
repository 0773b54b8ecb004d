//! SimGear property lists: the XML text inside every tape header, as a small property tree.
//!
//! [`PropertyList::parse`] follows SimGear's `readProperties`:
//!
//! * the root element must be `PropertyList`;
//! * a child without `n` gets the next free index for its name, where the counter is
//!   `max(previous explicit n + 1, running count)` and belongs to one parent *element*;
//! * two elements with the same name and index refer to the same node (this is how SimGear
//!   writes a node that has both a value and children);
//! * children keep the order in which they were first created;
//! * a `type` attribute clears the node's value; a node that ends up without children gets the
//!   element's text as value, typed by `type` (`unspecified` when absent).
//!
//! Values keep their exact text, so writing a tree that SimGear produced reproduces the text
//! byte for byte; the typed getters ([`PropNode::bool_value`], [`PropNode::int_value`],
//! [`PropNode::double_value`], ...) parse it the way SimGear does (`atoi`, `strtol`, `strtod`,
//! bools as `true` or any non-zero integer).
//!
//! [`PropertyList::to_xml`] follows SimGear's `writeProperties(…, write_all = true)`: an XML
//! declaration and an empty line, 2-space indentation, `n` only for non-zero indexes (or when a
//! node is written as two elements), `type` left out for `unspecified` values, and only `&`, `<`
//! and `>` escaped in text.
//!
//! ```
//! use recfmt_fgtape::props::{PropertyList, PropValue};
//!
//! let text = "<?xml version=\"1.0\"?>\n\n<PropertyList>\n  <a type=\"int\">1</a>\n  <a n=\"1\" type=\"bool\">true</a>\n</PropertyList>\n";
//! let mut tree = PropertyList::parse(text)?;
//! assert_eq!(tree.root.get("a[1]").and_then(|n| n.bool_value()), Some(true));
//! assert_eq!(tree.to_xml(), text);
//! tree.root.set("meta/tape-duration", PropValue::double(56.175));
//! assert!(tree.to_xml().contains("<tape-duration type=\"double\">56.175</tape-duration>"));
//! # Ok::<(), recfmt_fgtape::Error>(())
//! ```

use std::collections::HashMap;
use std::fmt::{self, Write as _};

use crate::error::{Error, Offset, Result};

/// Deepest element nesting accepted, so hostile input cannot exhaust the stack.
pub const MAX_DEPTH: usize = 128;

/// The value type of a property node, as named by the `type` attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PropType {
    /// `bool`: `true`/`false` when written by SimGear.
    Bool,
    /// `int`: a C `int`.
    Int,
    /// `long`: a C `long`.
    Long,
    /// `float`: a C `float`.
    Float,
    /// `double`: a C `double`, written with 10 significant digits.
    Double,
    /// `string`.
    String,
    /// `unspecified`: the type of a value without a `type` attribute.
    Unspecified,
    /// `vec3d`: three doubles separated by spaces.
    Vec3d,
    /// `vec4d`: four doubles separated by spaces.
    Vec4d,
}

impl PropType {
    /// The attribute value naming this type.
    pub fn name(self) -> &'static str {
        match self {
            PropType::Bool => "bool",
            PropType::Int => "int",
            PropType::Long => "long",
            PropType::Float => "float",
            PropType::Double => "double",
            PropType::String => "string",
            PropType::Unspecified => "unspecified",
            PropType::Vec3d => "vec3d",
            PropType::Vec4d => "vec4d",
        }
    }

    /// Parses a `type` attribute value (exact, lowercase, like SimGear).
    pub fn parse(name: &str) -> Option<PropType> {
        Some(match name {
            "bool" => PropType::Bool,
            "int" => PropType::Int,
            "long" => PropType::Long,
            "float" => PropType::Float,
            "double" => PropType::Double,
            "string" => PropType::String,
            "unspecified" => PropType::Unspecified,
            "vec3d" => PropType::Vec3d,
            "vec4d" => PropType::Vec4d,
            _ => return None,
        })
    }
}

impl fmt::Display for PropType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A typed value, kept as its exact text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropValue {
    /// The value type.
    pub ty: PropType,
    /// The text, unescaped (what SimGear's `getStringValue` returns for a value it wrote).
    pub text: String,
}

impl PropValue {
    /// A value of type `ty` with the given text.
    pub fn new(ty: PropType, text: impl Into<String>) -> Self {
        PropValue {
            ty,
            text: text.into(),
        }
    }

    /// A `bool` value (`true`/`false`).
    pub fn bool(value: bool) -> Self {
        PropValue::new(PropType::Bool, if value { "true" } else { "false" })
    }

    /// An `int` value.
    pub fn int(value: i32) -> Self {
        PropValue::new(PropType::Int, value.to_string())
    }

    /// A `long` value.
    pub fn long(value: i64) -> Self {
        PropValue::new(PropType::Long, value.to_string())
    }

    /// A `float` value, formatted like C++ `ostream << float` (6 significant digits).
    pub fn float(value: f32) -> Self {
        PropValue::new(PropType::Float, format_g(f64::from(value), 6))
    }

    /// A `double` value, formatted like SimGear (10 significant digits).
    pub fn double(value: f64) -> Self {
        PropValue::new(PropType::Double, format_g(value, 10))
    }

    /// A `string` value.
    pub fn string(value: impl Into<String>) -> Self {
        PropValue::new(PropType::String, value)
    }
}

/// One node of a property tree: a name, an index among same-named siblings, an optional value
/// and ordered children.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PropNode {
    /// Node name (the XML element name).
    pub name: String,
    /// Index among the siblings with the same name (`n` attribute).
    pub index: u32,
    /// The value, when the node has one.
    pub value: Option<PropValue>,
    /// Attributes other than `n` and `type`, in file order (SimGear would interpret `read`,
    /// `write`, `archive`, `alias`, `include`, `omit-node`... and keep others under `_attr_`;
    /// tapes never contain any, so they are only kept and written back).
    pub attributes: Vec<(String, String)>,
    /// Children in creation order.
    pub children: Vec<PropNode>,
}

impl PropNode {
    /// A node without value or children.
    pub fn new(name: impl Into<String>, index: u32) -> Self {
        PropNode {
            name: name.into(),
            index,
            ..PropNode::default()
        }
    }

    /// The child called `name` with index `index`.
    pub fn child(&self, name: &str, index: u32) -> Option<&PropNode> {
        self.children
            .iter()
            .find(|c| c.index == index && c.name == name)
    }

    /// Mutable access to the child called `name` with index `index`.
    pub fn child_mut(&mut self, name: &str, index: u32) -> Option<&mut PropNode> {
        self.children
            .iter_mut()
            .find(|c| c.index == index && c.name == name)
    }

    /// The children called `name`, in child order.
    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a PropNode> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The node at a relative path such as `recorder/record-size` or `signals/signal[3]/type`
    /// (a leading `/` is ignored; a step without `[i]` means index 0).
    pub fn get(&self, path: &str) -> Option<&PropNode> {
        let mut node = self;
        for step in path.split('/').filter(|s| !s.is_empty()) {
            let (name, index) = split_step(step)?;
            node = node.child(name, index)?;
        }
        Some(node)
    }

    /// The node at `path`, created (with any missing parents) when absent.
    pub fn get_or_create(&mut self, path: &str) -> &mut PropNode {
        let mut node = self;
        for step in path.split('/').filter(|s| !s.is_empty()) {
            let (name, index) = split_step(step).unwrap_or((step, 0));
            let pos = match node
                .children
                .iter()
                .position(|c| c.index == index && c.name == name)
            {
                Some(p) => p,
                None => {
                    node.children.push(PropNode::new(name, index));
                    node.children.len() - 1
                }
            };
            node = &mut node.children[pos];
        }
        node
    }

    /// Sets the value of the node at `path`, creating it when absent.
    pub fn set(&mut self, path: &str, value: PropValue) -> &mut PropNode {
        let node = self.get_or_create(path);
        node.value = Some(value);
        node
    }

    /// The value's text (any type), like SimGear's `getStringValue` for values it wrote.
    pub fn string_value(&self) -> Option<&str> {
        self.value.as_ref().map(|v| v.text.as_str())
    }

    /// The value as bool: `true` or any non-zero integer (case and surrounding space ignored),
    /// like SimGear's lax bool parsing; numbers are true when non-zero.
    pub fn bool_value(&self) -> Option<bool> {
        let v = self.value.as_ref()?;
        Some(match v.ty {
            PropType::Float | PropType::Double => strtod(&v.text) != 0.0,
            PropType::Long => strtol(&v.text, 0) != 0,
            _ => parse_bool(&v.text),
        })
    }

    /// The value as a C `int` (`atoi` for text, truncation for floating-point values).
    pub fn int_value(&self) -> Option<i32> {
        let v = self.value.as_ref()?;
        Some(match v.ty {
            PropType::Bool => i32::from(parse_bool(&v.text)),
            PropType::Float | PropType::Double => strtod(&v.text) as i32,
            PropType::Long => strtol(&v.text, 0) as i32,
            _ => atoi(&v.text),
        })
    }

    /// The value as a C `long` (`strtol` with base detection for `long` values).
    pub fn long_value(&self) -> Option<i64> {
        let v = self.value.as_ref()?;
        Some(match v.ty {
            PropType::Bool => i64::from(parse_bool(&v.text)),
            PropType::Float | PropType::Double => strtod(&v.text) as i64,
            PropType::Long => strtol(&v.text, 0),
            _ => strtol(&v.text, 10),
        })
    }

    /// The value as a C `double` (`strtod`: the longest numeric prefix, else 0).
    pub fn double_value(&self) -> Option<f64> {
        let v = self.value.as_ref()?;
        Some(match v.ty {
            PropType::Bool => f64::from(u8::from(parse_bool(&v.text))),
            _ => strtod(&v.text),
        })
    }

    /// The value as a C `float`.
    pub fn float_value(&self) -> Option<f32> {
        self.double_value().map(|d| d as f32)
    }
}

/// A parsed property list: the children of the `<PropertyList>` element.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PropertyList {
    /// The root node (name `PropertyList`, index 0); its children are the top-level properties.
    pub root: PropNode,
}

impl PropertyList {
    /// An empty property list.
    pub fn new() -> Self {
        PropertyList {
            root: PropNode::new("PropertyList", 0),
        }
    }

    /// Parses property-list XML text. Error offsets are byte offsets in `text`.
    pub fn parse(text: &str) -> Result<Self> {
        Self::parse_at(text, Offset::File(0))
    }

    /// Parses property-list XML text that starts at `base` in some enclosing stream; error
    /// offsets are given in that stream.
    pub fn parse_at(text: &str, base: Offset) -> Result<Self> {
        let at = |pos: usize| -> Offset {
            let pos = pos as u64;
            match base {
                Offset::File(b) => Offset::File(b.saturating_add(pos)),
                Offset::Decompressed(b) => Offset::Decompressed(b.saturating_add(pos)),
            }
        };
        let options = roxmltree::ParsingOptions {
            allow_dtd: false,
            ..roxmltree::ParsingOptions::default()
        };
        let doc = roxmltree::Document::parse_with_options(text, options).map_err(|e| {
            let pos = e.pos();
            Error::Xml {
                offset: at(text_pos_to_byte(text, pos.row, pos.col)),
                message: e.to_string(),
            }
        })?;
        let el = doc.root_element();
        if el.tag_name().name() != "PropertyList" || el.tag_name().namespace().is_some() {
            return Err(Error::Xml {
                offset: at(el.range().start),
                message: format!(
                    "root element is <{}>, expected <PropertyList>",
                    el.tag_name().name()
                ),
            });
        }
        let mut list = PropertyList::new();
        fill(&mut list.root, el, 1, &at)?;
        Ok(list)
    }

    /// The node at `path` below the root (see [`PropNode::get`]).
    pub fn get(&self, path: &str) -> Option<&PropNode> {
        self.root.get(path)
    }

    /// Writes the tree as SimGear's `writeProperties` does (see the module docs).
    pub fn to_xml(&self) -> String {
        let mut out = String::with_capacity(256);
        out.push_str("<?xml version=\"1.0\"?>\n\n<PropertyList>\n");
        for child in &self.root.children {
            write_node(&mut out, child, 2);
        }
        out.push_str("</PropertyList>\n");
        out
    }
}

/// Splits `name[3]` into `("name", 3)`; `name` is index 0.
fn split_step(step: &str) -> Option<(&str, u32)> {
    match step.find('[') {
        None => Some((step, 0)),
        Some(open) => {
            let rest = step[open + 1..].strip_suffix(']')?;
            Some((&step[..open], rest.trim().parse().ok()?))
        }
    }
}

/// Converts roxmltree's 1-based row and column (in characters) to a byte offset.
fn text_pos_to_byte(text: &str, row: u32, col: u32) -> usize {
    let mut line_start = 0usize;
    let mut row_left = row.saturating_sub(1);
    if row_left > 0 {
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                row_left -= 1;
                if row_left == 0 {
                    line_start = i + 1;
                    break;
                }
            }
        }
        if row_left > 0 {
            return text.len();
        }
    }
    let line = &text[line_start..];
    let skip = col.saturating_sub(1) as usize;
    line_start + line.char_indices().nth(skip).map_or(line.len(), |(i, _)| i)
}

fn fill(
    node: &mut PropNode,
    el: roxmltree::Node<'_, '_>,
    depth: usize,
    at: &dyn Fn(usize) -> Offset,
) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(Error::Xml {
            offset: at(el.range().start),
            message: format!("elements nested deeper than {MAX_DEPTH} levels"),
        });
    }
    // Counters belong to this element; the lookup map also covers children created by an
    // earlier element for the same node.
    let mut counters: HashMap<&str, u32> = HashMap::new();
    let mut positions: HashMap<(String, u32), usize> = node
        .children
        .iter()
        .enumerate()
        .map(|(i, c)| ((c.name.clone(), c.index), i))
        .collect();
    for child in el.children().filter(roxmltree::Node::is_element) {
        let name = child.tag_name().name();
        let index = match child.attribute("n") {
            Some(n) => {
                let index = u32::try_from(atoi(n)).map_err(|_| Error::Xml {
                    offset: at(child.range().start),
                    message: format!("negative index n=\"{n}\" on <{name}>"),
                })?;
                let counter = counters.entry(name).or_insert(0);
                *counter = (*counter).max(index.saturating_add(1));
                index
            }
            None => {
                let counter = counters.entry(name).or_insert(0);
                let index = *counter;
                *counter = counter.saturating_add(1);
                index
            }
        };
        let pos = *positions
            .entry((name.to_owned(), index))
            .or_insert_with(|| {
                node.children.push(PropNode::new(name, index));
                node.children.len() - 1
            });
        let target = &mut node.children[pos];
        let mut ty = None;
        for attr in child.attributes() {
            match attr.name() {
                "n" => {}
                "type" => {
                    let t = PropType::parse(attr.value()).ok_or_else(|| Error::Xml {
                        offset: at(child.range().start),
                        message: format!("unrecognized data type '{}' on <{name}>", attr.value()),
                    })?;
                    ty = Some(t);
                    target.value = None;
                }
                other => {
                    let value = attr.value().to_owned();
                    match target.attributes.iter_mut().find(|(k, _)| k == other) {
                        Some(slot) => slot.1 = value,
                        None => target.attributes.push((other.to_owned(), value)),
                    }
                }
            }
        }
        if child.children().any(|c| c.is_element()) {
            fill(target, child, depth + 1, at)?;
        }
        if target.children.is_empty() {
            let mut text = String::new();
            for t in child.children().filter(roxmltree::Node::is_text) {
                text.push_str(t.text().unwrap_or(""));
            }
            let ty = ty.unwrap_or_else(|| {
                // SimGear's setUnspecifiedValue keeps an existing type.
                target
                    .value
                    .as_ref()
                    .map_or(PropType::Unspecified, |v| v.ty)
            });
            target.value = Some(PropValue { ty, text });
        }
    }
    Ok(())
}

fn write_node(out: &mut String, node: &PropNode, indent: usize) {
    let has_children = !node.children.is_empty();
    let mut attributes_written = false;
    if let Some(value) = &node.value {
        push_indent(out, indent);
        out.push('<');
        out.push_str(&node.name);
        write_atts(out, node, has_children, true);
        attributes_written = true;
        if value.ty != PropType::Unspecified {
            out.push_str(" type=\"");
            out.push_str(value.ty.name());
            out.push('"');
        }
        out.push('>');
        escape_text(out, &value.text);
        out.push_str("</");
        out.push_str(&node.name);
        out.push_str(">\n");
    }
    if has_children {
        push_indent(out, indent);
        out.push('<');
        out.push_str(&node.name);
        write_atts(out, node, node.value.is_some(), !attributes_written);
        out.push_str(">\n");
        for child in &node.children {
            write_node(out, child, indent + 2);
        }
        push_indent(out, indent);
        out.push_str("</");
        out.push_str(&node.name);
        out.push_str(">\n");
    }
}

fn write_atts(out: &mut String, node: &PropNode, force_index: bool, extra: bool) {
    if node.index != 0 || force_index {
        let _ = write!(out, " n=\"{}\"", node.index);
    }
    if extra {
        for (k, v) in &node.attributes {
            out.push(' ');
            out.push_str(k);
            out.push_str("=\"");
            for c in v.chars() {
                match c {
                    '&' => out.push_str("&amp;"),
                    '<' => out.push_str("&lt;"),
                    '"' => out.push_str("&quot;"),
                    c => out.push(c),
                }
            }
            out.push('"');
        }
    }
}

fn push_indent(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn escape_text(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
}

/// SimGear's lax bool: stripped and lowercased, `true` or any non-zero `atoi` value.
pub fn parse_bool(text: &str) -> bool {
    let t = text.trim();
    t.eq_ignore_ascii_case("true") || atoi(t) != 0
}

/// C `atoi`: optional space and sign, then decimal digits up to the first non-digit; 0 when
/// there are none. Out-of-range values wrap like glibc's `(int) strtol`.
pub fn atoi(text: &str) -> i32 {
    strtol(text, 10) as i32
}

/// C `strtol` with base 10, 16 or 0 (0: `0x` prefix means hex, a leading `0` octal). Values
/// saturate at the `i64` range.
pub fn strtol(text: &str, base: u32) -> i64 {
    let s = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let (negative, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let has_hex_prefix = (s.starts_with("0x") || s.starts_with("0X"))
        && s[2..].starts_with(|c: char| c.is_ascii_hexdigit());
    let (radix, digits) = match base {
        0 if has_hex_prefix => (16, &s[2..]),
        0 if s.starts_with('0') => (8, s),
        0 => (10, s),
        16 if has_hex_prefix => (16, &s[2..]),
        b => (b.clamp(2, 36), s),
    };
    let mut value: i128 = 0;
    for c in digits.chars() {
        let Some(d) = c.to_digit(radix) else { break };
        value = (value * i128::from(radix) + i128::from(d)).min(i128::from(i64::MAX) + 1);
    }
    let value = if negative { -value } else { value };
    value.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// C `strtod` for decimal text: the longest prefix that is a number (`inf`, `infinity` and
/// `nan` included), after optional space; 0 when there is none. A trailing `f` or unit is
/// ignored, as in C. Hexadecimal floats are not recognised (read as 0).
pub fn strtod(text: &str) -> f64 {
    let s = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let rest = &s[i..];
    let lower: String = rest
        .chars()
        .take(8)
        .collect::<String>()
        .to_ascii_lowercase();
    let sign = if b.first() == Some(&b'-') { -1.0 } else { 1.0 };
    if lower.starts_with("inf") {
        return sign * f64::INFINITY;
    }
    if lower.starts_with("nan") {
        return f64::NAN;
    }
    let start_digits = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut mantissa_digits = i - start_digits;
    if i < b.len() && b[i] == b'.' {
        let dot = i;
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        mantissa_digits += i - dot - 1;
    }
    if mantissa_digits == 0 {
        return 0.0;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let exp_start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp_start {
            i = j;
        }
    }
    s[..i].parse().unwrap_or(0.0)
}

/// Formats like C's `%.{precision}g` (C++ `ostream` with `setprecision`): `precision`
/// significant digits, trailing zeros removed, exponent form below 1e-4 or from
/// 10^precision on.
pub fn format_g(value: f64, precision: usize) -> String {
    let precision = precision.max(1);
    if value.is_nan() {
        return if value.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        }
        .to_owned();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let sci = format!("{:.*e}", precision - 1, value);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= precision as i32 {
        let mantissa = trim_fraction(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
    } else {
        let decimals = (precision as i32 - 1 - exp).max(0) as usize;
        trim_fraction(&format!("{value:.decimals$}")).to_owned()
    }
}

fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_follow_simgear_counters() {
        let text = r#"<PropertyList><a/><a n="5"/><a/><b n="2"/><b/><a n="1"/></PropertyList>"#;
        let t = PropertyList::parse(text).unwrap();
        let got: Vec<(String, u32)> = t
            .root
            .children
            .iter()
            .map(|c| (c.name.clone(), c.index))
            .collect();
        let want = [("a", 0), ("a", 5), ("a", 6), ("b", 2), ("b", 3), ("a", 1)];
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert_eq!((g.0.as_str(), g.1), w);
        }
    }

    #[test]
    fn value_and_children_merge_and_write_back() {
        let text = "<?xml version=\"1.0\"?>\n\n<PropertyList>\n  <x n=\"0\" type=\"int\">3</x>\n  <x n=\"0\">\n    <y type=\"string\">a &lt;&amp;&gt; \"q\"</y>\n  </x>\n  <e n=\"1\">free</e>\n</PropertyList>\n";
        let t = PropertyList::parse(text).unwrap();
        assert_eq!(t.root.children.len(), 2);
        let x = t.get("x").unwrap();
        assert_eq!(x.int_value(), Some(3));
        assert_eq!(
            x.get("y").and_then(PropNode::string_value),
            Some("a <&> \"q\"")
        );
        assert_eq!(
            t.get("e[1]").unwrap().value.as_ref().unwrap().ty,
            PropType::Unspecified
        );
        assert_eq!(t.to_xml(), text);
    }

    #[test]
    fn empty_nodes_are_not_written_and_types_clear_values() {
        let mut t = PropertyList::new();
        t.root.get_or_create("messages");
        t.root.set("a/b", PropValue::bool(true));
        assert_eq!(
            t.to_xml(),
            "<?xml version=\"1.0\"?>\n\n<PropertyList>\n  <a>\n    <b type=\"bool\">true</b>\n  </a>\n</PropertyList>\n"
        );
        let t = PropertyList::parse(
            "<PropertyList><v type=\"int\">1</v><v n=\"0\" type=\"string\"><w/></v></PropertyList>",
        )
        .unwrap();
        assert!(t.get("v").unwrap().value.is_none());
    }

    #[test]
    fn rejects_bad_roots_types_and_xml_with_offsets() {
        let e = PropertyList::parse("<?xml version=\"1.0\"?>\n<Other/>").unwrap_err();
        assert!(
            matches!(
                e,
                Error::Xml {
                    offset: Offset::File(22),
                    ..
                }
            ),
            "{e}"
        );
        let e = PropertyList::parse("<PropertyList>\n  <a type=\"weird\">1</a></PropertyList>")
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Xml {
                    offset: Offset::File(17),
                    ..
                }
            ),
            "{e}"
        );
        let e = PropertyList::parse_at(
            "<PropertyList>\n <a>x</b></PropertyList>",
            Offset::Decompressed(100),
        )
        .unwrap_err();
        match e {
            Error::Xml {
                offset: Offset::Decompressed(o),
                ..
            } => assert!((115..=125).contains(&o), "{o}"),
            other => panic!("{other}"),
        }
        assert!(PropertyList::parse("<PropertyList><a n=\"-1\"/></PropertyList>").is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let depth = 5000;
        let text = format!(
            "<PropertyList>{}{}</PropertyList>",
            "<a>".repeat(depth),
            "</a>".repeat(depth)
        );
        assert!(PropertyList::parse(&text).is_err());
    }

    #[test]
    fn c_number_parsing() {
        assert_eq!(atoi(" 42abc"), 42);
        assert_eq!(atoi("-7"), -7);
        assert_eq!(atoi("x"), 0);
        assert_eq!(strtol("0x1F", 0), 31);
        assert_eq!(strtol("017", 0), 15);
        assert_eq!(strtod("1.5f"), 1.5);
        assert_eq!(strtod(" -2e3x"), -2000.0);
        assert_eq!(strtod("1e"), 1.0);
        assert_eq!(strtod("."), 0.0);
        assert!(strtod("nan").is_nan());
        assert!(parse_bool(" TRUE "));
        assert!(parse_bool("2"));
        assert!(!parse_bool("false"));
        assert!(!parse_bool("yes"));
    }

    #[test]
    fn g_formatting_matches_c() {
        assert_eq!(format_g(606.7833333333, 10), "606.7833333");
        assert_eq!(format_g(56.175, 10), "56.175");
        assert_eq!(format_g(0.0, 10), "0");
        assert_eq!(format_g(1e-5, 10), "1e-05");
        assert_eq!(format_g(1234567.0, 6), "1.23457e+06");
        assert_eq!(format_g(100000.0, 6), "100000");
        assert_eq!(format_g(0.0001, 6), "0.0001");
        assert_eq!(format_g(-3.0, 10), "-3");
    }
}
