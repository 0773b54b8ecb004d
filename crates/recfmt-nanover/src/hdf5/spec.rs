//! The datasets of a session part: their data, shape, chunks and attributes, and how one is
//! staged in its group.

use std::collections::BTreeSet;

use hdf5_pure::{AttrValue, Datatype, StagedGroup};
use recfmt_h5::{MAX_CHUNK_ROWS, text};

use crate::json::value_to_json_text;
use crate::proto::{Kind, ValueArray, Values, is_null};
use crate::recording::{array_unit, value_unit};

use super::part::ScalarCol;

/// Dataset data, owned until the group is committed.
pub(super) enum Data {
    F32(Vec<f32>),
    F64(Vec<f64>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    Bool(Vec<u8>),
    Str(Vec<String>),
}

impl Data {
    fn elem_size(&self) -> u64 {
        match self {
            Data::F32(_) | Data::U32(_) => 4,
            Data::F64(_) | Data::U64(_) => 8,
            Data::Bool(_) => 1,
            Data::Str(_) => 0,
        }
    }
}

pub(super) struct Spec {
    pub(super) name: String,
    pub(super) data: Data,
    pub(super) shape: Vec<u64>,
    pub(super) per_frame: bool,
    pub(super) attrs: Vec<(String, AttrValue)>,
}

/// Chunk dimensions: along the first axis, each dimension at most 65 535 (hdf5-pure 0.47
/// encodes larger chunk dimensions in a way HDF5 2.0 refuses), about 1 MiB per chunk.
fn chunks(shape: &[u64], elem: u64) -> Option<Vec<u64>> {
    if shape.is_empty() || shape.contains(&0) || elem == 0 {
        return None;
    }
    let mut c: Vec<u64> = shape
        .iter()
        .map(|&d| d.min(MAX_CHUNK_ROWS as u64))
        .collect();
    let row: u64 = c[1..].iter().product::<u64>() * elem;
    c[0] = ((1u64 << 20) / row.max(1)).clamp(1, c[0]);
    Some(c)
}

pub(super) fn stage(g: &mut StagedGroup<'_>, spec: &Spec, deflate: Option<u8>, bool_t: &Datatype) {
    g.create_dataset(&spec.name, |b| {
        match &spec.data {
            Data::F32(v) => b.with_f32_data(v),
            Data::F64(v) => b.with_f64_data(v),
            Data::U32(v) => b.with_u32_data(v),
            Data::U64(v) => b.with_u64_data(v),
            Data::Bool(v) => b.with_enum_u8_data(bool_t.clone(), v),
            Data::Str(v) => {
                let refs: Vec<&str> = v.iter().map(String::as_str).collect();
                b.with_vlen_strings(&refs)
            }
        };
        if !matches!(spec.data, Data::Str(_)) {
            b.with_shape(&spec.shape);
        }
        if let (true, Some(level), Some(c)) = (
            spec.per_frame,
            deflate,
            chunks(&spec.shape, spec.data.elem_size()),
        ) {
            b.with_chunks(&c)
                .with_shuffle()
                .with_deflate(u32::from(level));
        }
        for (k, v) in &spec.attrs {
            b.set_attr(k, v.clone());
        }
    });
}

pub(super) fn scalar_spec(key: &str, col: ScalarCol, f: u64) -> Spec {
    let kinds: BTreeSet<u8> = col
        .rows
        .iter()
        .flatten()
        .map(|v| match v.kind {
            None | Some(Kind::NullValue(_)) => 0,
            Some(Kind::NumberValue(_)) => 1,
            Some(Kind::BoolValue(_)) => 2,
            Some(Kind::StringValue(_)) => 3,
            _ => 4,
        })
        .filter(|&k| k != 0)
        .collect();
    let gaps = col.rows.iter().any(|v| v.as_ref().is_none_or(is_null));
    let mut attrs = vec![("nanover.key".to_string(), text(key))];
    let kinds: Vec<u8> = kinds.into_iter().collect();
    let data = match kinds.as_slice() {
        [] | [1] => {
            if let Some(u) = value_unit(key) {
                attrs.push(("unit".into(), text(u)));
            }
            Data::F64(
                col.rows
                    .iter()
                    .map(|v| match v.as_ref().and_then(|v| v.kind.as_ref()) {
                        Some(Kind::NumberValue(n)) => *n,
                        _ => f64::NAN,
                    })
                    .collect(),
            )
        }
        [2] if !gaps => Data::Bool(
            col.rows
                .iter()
                .map(|v| {
                    u8::from(matches!(
                        v.as_ref().and_then(|v| v.kind.as_ref()),
                        Some(Kind::BoolValue(true))
                    ))
                })
                .collect(),
        ),
        [2] => {
            attrs.push((
                "description".into(),
                text("boolean as 1/0, NaN where the key has no value"),
            ));
            Data::F64(
                col.rows
                    .iter()
                    .map(|v| match v.as_ref().and_then(|v| v.kind.as_ref()) {
                        Some(Kind::BoolValue(b)) => f64::from(u8::from(*b)),
                        _ => f64::NAN,
                    })
                    .collect(),
            )
        }
        [3] => Data::Str(
            col.rows
                .iter()
                .map(|v| match v.as_ref().and_then(|v| v.kind.as_ref()) {
                    Some(Kind::StringValue(s)) => s.clone(),
                    _ => String::new(),
                })
                .collect(),
        ),
        _ => {
            attrs.push(("encoding".into(), text("json")));
            Data::Str(
                col.rows
                    .iter()
                    .map(|v| match v {
                        Some(v) if !is_null(v) => value_to_json_text(v),
                        _ => String::new(),
                    })
                    .collect(),
            )
        }
    };
    Spec {
        name: String::new(),
        data,
        shape: vec![f],
        per_frame: true,
        attrs,
    }
}

pub(super) fn static_spec(key: &str, a: &ValueArray) -> Option<Spec> {
    let mut attrs = vec![("nanover.key".to_string(), text(key))];
    if let Some(u) = array_unit(key) {
        attrs.push(("unit".into(), text(u)));
    }
    let (data, shape) = match &a.values {
        Some(Values::FloatValues(v)) => (Data::F32(v.values.clone()), vec![v.values.len() as u64]),
        Some(Values::IndexValues(v)) => {
            let n = v.values.len() as u64;
            let shape = if key == "bond.pairs" && n.is_multiple_of(2) {
                attrs.push(("layout".into(), text("[bonds, 2] particle indices")));
                vec![n / 2, 2]
            } else {
                vec![n]
            };
            (Data::U32(v.values.clone()), shape)
        }
        Some(Values::StringValues(v)) => (Data::Str(v.values.clone()), vec![v.values.len() as u64]),
        None => return None,
    };
    Some(Spec {
        name: String::new(),
        data,
        shape,
        per_frame: false,
        attrs,
    })
}

pub(super) fn dynamic_spec(
    key: &str,
    initial: Option<&ValueArray>,
    changes: &[(u64, ValueArray)],
    f: u64,
) -> Result<Spec, String> {
    let mut attrs = vec![
        ("nanover.key".to_string(), text(key)),
        (
            "layout".into(),
            text("[frames, n]: the array after each record"),
        ),
    ];
    if let Some(u) = array_unit(key) {
        attrs.push(("unit".into(), text(u)));
    }
    let all: Vec<&ValueArray> = initial
        .into_iter()
        .chain(changes.iter().map(|(_, a)| a))
        .collect();
    let n = all.first().map_or(0, |a| a.len());
    if all.iter().any(|a| a.len() != n) {
        return Err("its length changes".into());
    }
    let floats = all
        .iter()
        .all(|a| matches!(a.values, Some(Values::FloatValues(_))) || a.is_empty());
    let indices = all
        .iter()
        .all(|a| matches!(a.values, Some(Values::IndexValues(_))));
    if !floats && !indices {
        return Err("it is not one numeric type".into());
    }
    if indices && initial.is_none() {
        return Err(
            "it has no value before it first changes (no integer stands for absent)".into(),
        );
    }
    let mut current: Option<&ValueArray> = initial;
    let mut next = changes.iter().peekable();
    let mut f32s = Vec::new();
    let mut u32s = Vec::new();
    for row in 0..f {
        while let Some((r, a)) = next.peek() {
            if *r > row {
                break;
            }
            current = Some(a);
            next.next();
        }
        match current {
            Some(a) if floats => f32s.extend_from_slice(a.as_floats().unwrap_or(&[])),
            Some(a) => u32s.extend_from_slice(a.as_indices().unwrap_or(&[])),
            None => f32s.extend(std::iter::repeat_n(f32::NAN, n)),
        }
    }
    Ok(Spec {
        name: String::new(),
        data: if floats {
            Data::F32(f32s)
        } else {
            Data::U32(u32s)
        },
        shape: vec![f, n as u64],
        per_frame: true,
        attrs,
    })
}
