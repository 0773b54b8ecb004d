//! Every real sample parses, and record counts, timestamps, frame_index patterns, keys, types
//! and example values agree with `INVENTORY.txt` (written by NanoVer's own Python reader).

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use prost::Message;
use recfmt_nanover::io::{Reader, Record};
use recfmt_nanover::{FileKind, GetFrameResponse, Kind, StateUpdate, Value, Values};

/// What INVENTORY.txt says about one array or value key of a trajectory.
#[derive(Debug, Default, Clone, PartialEq)]
struct KeyInfo {
    kind: String,
    records: u64,
    example: String,
}

#[derive(Debug, Default)]
struct TrajInventory {
    records: u64,
    t0: u128,
    tn: u128,
    monotonic: bool,
    strictly: bool,
    max_msg: u64,
    resets: Vec<u64>,
    first_indices: Vec<u32>,
    consecutive: (u64, u64),
    max_index: u32,
    arrays: BTreeMap<String, KeyInfo>,
    values: BTreeMap<String, KeyInfo>,
}

#[derive(Debug, Default)]
struct StateInventory {
    records: u64,
    t0: u128,
    tn: u128,
    monotonic: bool,
    removals: u64,
    /// (prefix, kind) -> count
    prefixes: BTreeMap<(String, String), u64>,
}

fn field<'a>(line: &'a str, key: &str) -> &'a str {
    let start = line.find(&format!("{key}=")).unwrap() + key.len() + 1;
    line[start..].split_whitespace().next().unwrap()
}

fn list_after<'a>(line: &'a str, marker: &str) -> &'a str {
    let start = line.find(marker).unwrap() + marker.len();
    let rest = &line[start..];
    let open = rest.find('[').unwrap();
    let close = rest.find(']').unwrap();
    &rest[open + 1..close]
}

fn numbers<T: std::str::FromStr>(list: &str) -> Vec<T>
where
    T::Err: std::fmt::Debug,
{
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect()
}

fn parse_inventory(
    text: &str,
) -> (
    BTreeMap<String, TrajInventory>,
    BTreeMap<String, StateInventory>,
) {
    let mut trajs = BTreeMap::new();
    let mut states = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(path) = line.strip_prefix("== ") {
            let name = path.rsplit('/').next().unwrap().trim().to_string();
            if name.ends_with(".traj") {
                trajs.insert(name.clone(), TrajInventory::default());
            } else {
                states.insert(name.clone(), StateInventory::default());
            }
            current = Some(name);
            continue;
        }
        let Some(name) = current.as_ref() else {
            continue;
        };
        let t = line.trim_start();
        if let Some(inv) = trajs.get_mut(name) {
            if t.starts_with("header ") {
                assert_eq!(field(t, "magic"), "6661355757386708963");
                assert_eq!(field(t, "version"), "2");
                inv.records = field(t, "records").parse().unwrap();
                inv.t0 = field(t, "t0").trim_end_matches("us").parse().unwrap();
                inv.tn = field(t, "tN").trim_end_matches("us").parse().unwrap();
                inv.monotonic = field(t, "monotonic") == "True";
                inv.strictly = field(t, "strictly") == "True";
                inv.max_msg = field(t, "max_msg").trim_end_matches('B').parse().unwrap();
            } else if t.starts_with("frame_index==0") {
                inv.resets = numbers(list_after(t, "at records"));
                inv.first_indices = numbers(list_after(t, "first indices"));
                let steps = t.split("steps ").nth(1).unwrap().split(';').next().unwrap();
                let (a, b) = steps.split_once('/').unwrap();
                inv.consecutive = (a.trim().parse().unwrap(), b.trim().parse().unwrap());
                inv.max_index = t
                    .split("max index ")
                    .nth(1)
                    .unwrap()
                    .trim()
                    .parse()
                    .unwrap();
            } else if t.starts_with("arrays ") || t.starts_with("values ") {
                let mut parts = t.split_whitespace();
                let section = parts.next().unwrap();
                let key = parts.next().unwrap().to_string();
                let kind = parts.next().unwrap().to_string();
                assert_eq!(parts.next(), Some("in"));
                let records = parts.next().unwrap().parse().unwrap();
                let example = t.split_once("e.g. ").unwrap().1.trim().to_string();
                let info = KeyInfo {
                    kind,
                    records,
                    example,
                };
                let map = if section == "arrays" {
                    &mut inv.arrays
                } else {
                    &mut inv.values
                };
                map.insert(key, info);
            }
        } else if let Some(inv) = states.get_mut(name) {
            if t.starts_with("records=") {
                inv.records = field(t, "records").parse().unwrap();
                inv.t0 = field(t, "t0").trim_end_matches("us").parse().unwrap();
                inv.tn = field(t, "tN").trim_end_matches("us").parse().unwrap();
                inv.monotonic = field(t, "monotonic") == "True";
                inv.removals = t.split("values=").nth(1).unwrap().trim().parse().unwrap();
            } else if let Some(rest) = t.strip_prefix("key prefix '") {
                let (prefix, rest) = rest.split_once('\'').unwrap();
                let kind = field(rest, "kind").to_string();
                let count = rest
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix('x').and_then(|n| n.parse().ok()))
                    .unwrap();
                inv.prefixes.insert((prefix.to_string(), kind), count);
            }
        }
    }
    (trajs, states)
}

/// Parses the Python list repr of INVENTORY's `first=[...]` into tokens (strings unquoted).
fn python_list(text: &str) -> Vec<String> {
    let inner = text
        .trim()
        .strip_prefix('[')
        .unwrap()
        .strip_suffix(']')
        .unwrap();
    let mut out = Vec::new();
    let mut chars = inner.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            ' ' | ',' => {
                chars.next();
            }
            '\'' => {
                chars.next();
                let mut s = String::new();
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    s.push(c);
                }
                out.push(s);
            }
            _ => {
                let mut s = String::new();
                while let Some(&c) = chars.peek() {
                    if c == ',' {
                        break;
                    }
                    s.push(c);
                    chars.next();
                }
                out.push(s.trim().to_string());
            }
        }
    }
    out
}

fn kind_name(v: &Value) -> &'static str {
    match &v.kind {
        Some(Kind::NullValue(_)) => "null_value",
        Some(Kind::NumberValue(_)) => "number_value",
        Some(Kind::StringValue(_)) => "string_value",
        Some(Kind::BoolValue(_)) => "bool_value",
        Some(Kind::StructValue(_)) => "struct_value",
        Some(Kind::ListValue(_)) => "list_value",
        None => "none",
    }
}

fn check_array_example(file: &str, key: &str, example: &str, array: &recfmt_nanover::ValueArray) {
    let (len, first) = example.split_once(" first=").unwrap();
    let len: usize = len.strip_prefix("len=").unwrap().parse().unwrap();
    assert_eq!(array.len(), len, "{file}: {key}: example length");
    let tokens = python_list(first);
    assert_eq!(tokens.len(), len.min(4), "{file}: {key}: example elements");
    for (i, token) in tokens.iter().enumerate() {
        match &array.values {
            Some(Values::FloatValues(a)) => {
                let expected: f64 = token.parse().unwrap();
                assert_eq!(f64::from(a.values[i]), expected, "{file}: {key}[{i}]");
            }
            Some(Values::IndexValues(a)) => {
                assert_eq!(a.values[i].to_string(), *token, "{file}: {key}[{i}]");
            }
            Some(Values::StringValues(a)) => {
                assert_eq!(a.values[i], *token, "{file}: {key}[{i}]");
            }
            None => panic!("{file}: {key}: empty ValueArray"),
        }
    }
}

fn check_traj(path: &Path, inv: &TrajInventory) {
    let file = path.file_name().unwrap().to_string_lossy().into_owned();
    let bytes = std::fs::read(path).unwrap();
    let mut reader = Reader::new(&bytes[..], FileKind::Trajectory);
    reader.set_total_len(Some(bytes.len() as u64));
    reader.set_strict(true);
    let mut record = Record::default();
    let mut timestamps = Vec::new();
    let mut indices = Vec::new();
    let mut max_msg = 0;
    let mut arrays: BTreeMap<String, KeyInfo> = BTreeMap::new();
    let mut values: BTreeMap<String, KeyInfo> = BTreeMap::new();
    while reader.read_record(&mut record).unwrap() {
        max_msg = max_msg.max(record.payload.len() as u64);
        timestamps.push(record.timestamp);
        let msg = GetFrameResponse::decode(&record.payload[..]).unwrap();
        indices.push(msg.frame_index);
        let frame = msg.frame.unwrap_or_default();
        for (k, a) in &frame.arrays {
            let e = arrays.entry(k.clone()).or_insert_with(|| KeyInfo {
                kind: a.kind_name().to_string(),
                ..KeyInfo::default()
            });
            assert_eq!(e.kind, a.kind_name(), "{file}: {k} changes type");
            if e.records == 0 {
                let inv_key = inv
                    .arrays
                    .get(k)
                    .unwrap_or_else(|| panic!("{file}: {k} not in INVENTORY"));
                check_array_example(&file, k, &inv_key.example, a);
            }
            e.records += 1;
        }
        for (k, v) in &frame.values {
            let e = values.entry(k.clone()).or_insert_with(|| KeyInfo {
                kind: kind_name(v).to_string(),
                ..KeyInfo::default()
            });
            if e.records == 0 {
                let inv_key = inv
                    .values
                    .get(k)
                    .unwrap_or_else(|| panic!("{file}: {k} not in INVENTORY"));
                if let (Some(expected), Some(Kind::NumberValue(n))) =
                    (inv_key.example.strip_prefix("number_value: "), &v.kind)
                {
                    assert_eq!(*n, expected.trim().parse::<f64>().unwrap(), "{file}: {k}");
                }
            }
            e.records += 1;
        }
    }
    assert!(
        !reader.integrity().lost_data(),
        "{file}: {:?}",
        reader.integrity()
    );
    assert_eq!(
        reader.position(),
        bytes.len() as u64,
        "{file}: not read to the end"
    );
    assert_eq!(timestamps.len() as u64, inv.records, "{file}: record count");
    assert_eq!(timestamps[0], inv.t0, "{file}: t0");
    assert_eq!(*timestamps.last().unwrap(), inv.tn, "{file}: tN");
    assert_eq!(timestamps.windows(2).all(|w| w[0] <= w[1]), inv.monotonic);
    assert_eq!(timestamps.windows(2).all(|w| w[0] < w[1]), inv.strictly);
    assert_eq!(max_msg, inv.max_msg, "{file}: largest payload");
    let resets: Vec<u64> = (0..indices.len() as u64)
        .filter(|&i| indices[i as usize] == 0)
        .collect();
    assert_eq!(resets, inv.resets, "{file}: frame_index == 0 positions");
    assert_eq!(indices[..8], inv.first_indices[..], "{file}: first indices");
    let steps = indices.windows(2).filter(|w| w[1] == w[0] + 1).count() as u64;
    assert_eq!((steps, indices.len() as u64 - 1), inv.consecutive, "{file}");
    assert_eq!(
        *indices.iter().max().unwrap(),
        inv.max_index,
        "{file}: max index"
    );
    let strip = |m: &BTreeMap<String, KeyInfo>| -> BTreeMap<String, (String, u64)> {
        m.iter()
            .map(|(k, v)| (k.clone(), (v.kind.clone(), v.records)))
            .collect()
    };
    assert_eq!(strip(&arrays), strip(&inv.arrays), "{file}: arrays");
    assert_eq!(strip(&values), strip(&inv.values), "{file}: values");
    eprintln!(
        "{file}: {} records, {} array keys, {} value keys, resets at {resets:?}: as INVENTORY.txt",
        timestamps.len(),
        arrays.len(),
        values.len()
    );
}

fn check_state(path: &Path, inv: &StateInventory) {
    let file = path.file_name().unwrap().to_string_lossy().into_owned();
    let bytes = std::fs::read(path).unwrap();
    let mut reader = Reader::new(&bytes[..], FileKind::State);
    reader.set_total_len(Some(bytes.len() as u64));
    reader.set_strict(true);
    let mut timestamps = Vec::new();
    let mut removals = 0;
    let mut prefixes: BTreeMap<(String, String), u64> = BTreeMap::new();
    for (t, update) in reader
        .updates()
        .map(|m| m.unwrap())
        .map(|m| (m.timestamp, m.message))
    {
        timestamps.push(t);
        for (k, v) in update.changes() {
            if recfmt_nanover::is_null(v) {
                removals += 1;
            }
            let prefix = k.split('.').next().unwrap().to_string();
            *prefixes
                .entry((prefix, kind_name(v).to_string()))
                .or_default() += 1;
        }
        // A re-encoded update decodes to the same message.
        assert_eq!(
            StateUpdate::decode(&update.encode_to_vec()[..]).unwrap(),
            update
        );
    }
    assert_eq!(
        reader.position(),
        bytes.len() as u64,
        "{file}: not read to the end"
    );
    assert_eq!(timestamps.len() as u64, inv.records, "{file}: record count");
    assert_eq!(timestamps[0], inv.t0, "{file}: t0");
    assert_eq!(*timestamps.last().unwrap(), inv.tn, "{file}: tN");
    assert_eq!(timestamps.windows(2).all(|w| w[0] <= w[1]), inv.monotonic);
    assert_eq!(removals, inv.removals, "{file}: removals");
    assert_eq!(prefixes, inv.prefixes, "{file}: key prefixes");
    eprintln!(
        "{file}: {} records, {removals} removals, {} prefix/kind pairs: as INVENTORY.txt",
        timestamps.len(),
        prefixes.len()
    );
}

#[test]
fn every_sample_agrees_with_the_inventory() {
    let Some(dir) = common::samples_dir() else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("server-py/INVENTORY.txt")).unwrap();
    let (trajs, states) = parse_inventory(&text);
    let files = common::sample_files();
    assert_eq!(
        trajs.len() + states.len(),
        files.len(),
        "INVENTORY lists every file"
    );
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        match (trajs.get(&name), states.get(&name)) {
            (Some(inv), _) => check_traj(&path, inv),
            (_, Some(inv)) => check_state(&path, inv),
            _ => panic!("{name} is not in INVENTORY.txt"),
        }
    }
}
