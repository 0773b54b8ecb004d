#![allow(clippy::unwrap_used)]

use super::*;
use crate::{ArrayValue, DType, FrameBuf, Schema, Shape, SignalDesc, StreamDesc, TimeBase, Value};

fn signals() -> Vec<SignalDesc> {
    vec![
        SignalDesc::scalar("t", DType::U64),
        SignalDesc::scalar("b", DType::U8),
        SignalDesc::scalar("v", DType::F32).with_shape(Shape::Fixed(vec![2])),
        SignalDesc::scalar("l", DType::I16).with_shape(Shape::Variable),
        SignalDesc::scalar("s", DType::Str),
    ]
}

/// [`StreamBatch::time_summary`] against the row-by-row fold a scan used to make, over
/// lengths around the block and lane sizes, NaN times, times going back, and nulls.
#[test]
fn time_summary_is_the_fold_of_every_row() {
    fn fold(batch: &StreamBatch, desc: &StreamDesc) -> TimeSummary {
        let mut s = TimeSummary::default();
        batch.for_each_time(desc, |t| {
            let Some(t) = t else { return };
            s.first = s.first.or(Some(t));
            s.min = Some(s.min.map_or(t, |v| v.min(t)));
            s.max = Some(s.max.map_or(t, |v| v.max(t)));
            if s.last.is_some_and(|last| t < last) {
                s.backwards += 1;
            }
            s.last = Some(t);
        });
        s
    }
    let bits = |x: Option<f64>| x.map(f64::to_bits);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for len in [0usize, 1, 7, 8, 9, 63, 511, 512, 513, 1500] {
        for (dtype, nulls, nans) in [
            (DType::F64, false, false),
            (DType::F64, false, true),
            (DType::F64, true, true),
            (DType::U64, false, false),
            (DType::I32, true, false),
        ] {
            let signals = vec![SignalDesc::scalar("t", dtype)];
            let desc = StreamDesc::new("S", signals[0].clone(), TimeBase::MICROSECONDS);
            let values: Vec<Value> = (0..len)
                .map(|i| {
                    let r = next();
                    let t = i as f64 * 10.0 - (r % 25) as f64;
                    if nulls && r % 11 == 0 {
                        Value::Null
                    } else if nans && r % 13 == 0 {
                        Value::Float(f64::NAN)
                    } else {
                        match dtype {
                            DType::F64 => Value::Float(t),
                            DType::U64 => Value::UInt(t.max(0.0) as u64),
                            _ => Value::Int(t as i64),
                        }
                    }
                })
                .collect();
            let batch_of = |values: &[Value]| {
                let mut batch = StreamBatch::new(0, &signals, values.len());
                for v in values {
                    batch.push_values(std::slice::from_ref(v)).unwrap();
                }
                batch
            };
            let batch = batch_of(&values);
            let what = format!("{len} rows of {dtype:?}, nulls {nulls}, NaN {nans}");
            let same = |want: &TimeSummary, got: &TimeSummary, how: &str| {
                assert_eq!(bits(want.first), bits(got.first), "{what}{how}: first");
                assert_eq!(bits(want.last), bits(got.last), "{what}{how}: last");
                assert_eq!(bits(want.min), bits(got.min), "{what}{how}: min");
                assert_eq!(bits(want.max), bits(got.max), "{what}{how}: max");
                assert_eq!(want.backwards, got.backwards, "{what}{how}: backwards");
            };
            let want = fold(&batch, &desc);
            same(&want, &batch.time_summary(&desc), "");
            // Two batches of consecutive rows, merged, summarise as the whole.
            let (head, tail) = values.split_at(len / 3);
            let mut merged = batch_of(head).time_summary(&desc);
            merged.merge(&batch_of(tail).time_summary(&desc));
            same(&want, &merged, ", merged");
        }
    }
}

#[test]
fn rows_round_trip_through_columns() {
    let mut batch = StreamBatch::new(0, &signals(), 8);
    let rows = [
        vec![
            Value::UInt(1),
            Value::Int(255),
            Value::Array(ArrayValue::F64(vec![0.5, 2.0])),
            Value::Array(ArrayValue::Int(vec![-1, 2, 3])),
            Value::Str("a".into()),
        ],
        vec![
            Value::UInt(2),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
        ],
        vec![
            Value::UInt(3),
            Value::UInt(7),
            Value::Array(ArrayValue::F32(vec![1.0, -1.0])),
            Value::Array(ArrayValue::Int(vec![])),
            Value::Str(String::new()),
        ],
    ];
    for row in &rows {
        batch.push_values(row).unwrap();
    }
    batch.check_consistent().unwrap();
    let expected_v = Value::Array(ArrayValue::F32(vec![0.5, 2.0]));
    assert_eq!(batch.row_values(0)[2], expected_v);
    assert_eq!(batch.row_values(1), rows[1]);
    assert_eq!(batch.row_values(0)[3], rows[0][3]);
    assert_eq!(batch.row_values(2)[4], rows[2][4]);
    assert_eq!(batch.columns()[2].data().len(), 6);
    let desc = crate::StreamDesc {
        signals: signals(),
        ..crate::StreamDesc::new("S", signals()[0].clone(), crate::TimeBase::MICROSECONDS)
    };
    assert_eq!(batch.times(&desc), [Some(1e-6), Some(2e-6), Some(3e-6)]);
}

#[test]
fn a_bad_value_leaves_the_batch_unchanged() {
    let mut batch = StreamBatch::new(0, &signals(), 8);
    let bad = [
        Value::UInt(1),
        Value::Int(300),
        Value::Null,
        Value::Null,
        Value::Null,
    ];
    let err = batch.push_values(&bad).unwrap_err();
    assert_eq!(err.signal, 1);
    assert!(err.message.contains("300"), "{err}");
    assert_eq!(batch.rows(), 0);
    batch.check_consistent().unwrap();
    let wrong_shape = [
        Value::UInt(1),
        Value::Null,
        Value::Array(ArrayValue::F32(vec![1.0])),
        Value::Null,
        Value::Null,
    ];
    assert!(batch.push_values(&wrong_shape).is_err());
    assert!(batch.push_values(&[Value::Float(1.5)]).is_err());
    let float_in_int = [
        Value::UInt(1),
        Value::Float(1.5),
        Value::Null,
        Value::Null,
        Value::Null,
    ];
    assert!(batch.push_values(&float_in_int).is_err());
    assert_eq!(batch.rows(), 0);
}

#[test]
fn direct_appends_are_checked_and_padded() {
    let mut batch = StreamBatch::new(0, &signals()[..2], 8);
    batch.push_values(&[Value::UInt(1), Value::Null]).unwrap();
    if let ColumnData::U64(t) = batch.columns_mut()[0].data_mut() {
        t.extend([2, 3]);
    }
    if let ColumnData::U8(b) = batch.columns_mut()[1].data_mut() {
        b.extend([4, 5]);
    }
    batch.commit_rows(2);
    batch.check_consistent().unwrap();
    assert_eq!(
        batch.columns()[1].validity(),
        Some(&[false, true, true][..])
    );
    if let ColumnData::U64(t) = batch.columns_mut()[0].data_mut() {
        t.push(9);
    }
    assert!(batch.check_consistent().is_err());
}

#[test]
fn slices_append_as_the_equivalent_values_do() {
    let mut direct = StreamBatch::new(0, &signals(), 8);
    let mut by_value = StreamBatch::new(0, &signals(), 8);
    type Row<'a> = (u64, Option<&'a [f32]>, Option<&'a [i16]>);
    let rows: [Row; 3] = [
        (1, Some(&[0.5, 2.0]), Some(&[-1, 2, 3])),
        (2, None, None),
        (3, Some(&[1.0, -1.0]), Some(&[])),
    ];
    for (t, v, l) in rows {
        let row = direct.rows();
        let cols = direct.columns_mut();
        cols[0].push_slice(&[t]).unwrap();
        cols[1].push_value(&Value::Null, row).unwrap();
        match v {
            Some(v) => cols[2].push_slice(v).unwrap(),
            None => cols[2].push_value(&Value::Null, row).unwrap(),
        }
        match l {
            Some(l) => {
                cols[3].room_for(l.len()).unwrap();
                cols[3].push_slice(l).unwrap();
            }
            None => cols[3].push_value(&Value::Null, row).unwrap(),
        }
        cols[4].room_for(1).unwrap();
        cols[4].push_str("x").unwrap();
        direct.commit_rows(1);
        let array = |a: Option<ArrayValue>| a.map_or(Value::Null, Value::Array);
        by_value
            .push_values(&[
                Value::UInt(t),
                Value::Null,
                array(v.map(|v| ArrayValue::F32(v.to_vec()))),
                array(l.map(|l| ArrayValue::Int(l.iter().map(|&x| x.into()).collect()))),
                Value::Str("x".into()),
            ])
            .unwrap();
    }
    direct.check_consistent().unwrap();
    assert_eq!(direct, by_value);
    // Refused: another element type, a fixed shape of another size; nothing appended.
    let cols = direct.columns_mut();
    assert!(cols[2].push_slice(&[1.0f64, 2.0]).is_err());
    assert!(cols[2].push_slice(&[1.0f32]).is_err());
    assert!(cols[0].push_slice(&[1u64, 2]).is_err());
    assert_eq!(cols[2].data().len(), 6);
    assert!(cols[3].room_for(usize::MAX).is_err());
    assert!(cols[4].room_for(usize::MAX).is_err());
    assert!(cols[2].room_for(usize::MAX).is_ok());
    direct.check_consistent().unwrap();
}

#[test]
fn append_and_retain_keep_rows_aligned() {
    let rows = |t: u64, null: bool| {
        vec![
            Value::UInt(t),
            if null { Value::Null } else { Value::UInt(t) },
            Value::Array(ArrayValue::F32(vec![t as f32, -(t as f32)])),
            Value::Array(ArrayValue::Int((0..(t as i64 % 3)).collect())),
            Value::Str(format!("r{t}")),
        ]
    };
    let mut a = StreamBatch::new(0, &signals(), 8);
    let mut b = StreamBatch::new(0, &signals(), 8);
    let mut all = StreamBatch::new(0, &signals(), 8);
    for t in 0..5 {
        a.push_values(&rows(t, t == 1)).unwrap();
        all.push_values(&rows(t, t == 1)).unwrap();
    }
    for t in 5..9 {
        b.push_values(&rows(t, t == 7)).unwrap();
        all.push_values(&rows(t, t == 7)).unwrap();
    }
    a.append(b).unwrap();
    a.check_consistent().unwrap();
    assert_eq!(a, all);
    let keep: Vec<bool> = (0..9).map(|t| t % 2 == 1).collect();
    a.retain_rows(&keep);
    a.check_consistent().unwrap();
    assert_eq!(a.rows(), 4);
    for (i, t) in [1u64, 3, 5, 7].into_iter().enumerate() {
        assert_eq!(a.row_values(i), {
            let mut r = rows(t, t == 1 || t == 7);
            if let Value::Array(ArrayValue::F32(_)) = r[2] {
                r[2] = Value::Array(ArrayValue::F32(vec![t as f32, -(t as f32)]));
            }
            r
        });
    }
    let mut empty = StreamBatch::new(0, &signals(), 8);
    empty.append(a.clone()).unwrap();
    assert_eq!(empty, a);
}

#[test]
fn skipped_columns_hold_nothing_and_stay_consistent() {
    let stream = StreamDesc {
        signals: signals(),
        ..StreamDesc::new("S", signals()[0].clone(), TimeBase::MICROSECONDS)
    };
    let schema = Schema {
        streams: vec![stream],
    };
    let mut set = BatchSet::with_columns(&schema, 8, |_| true, |_, signal| signal == 0);
    let row = |t: u64| FrameBuf {
        stream: 0,
        values: vec![
            Value::UInt(t),
            Value::UInt(3),
            Value::Array(ArrayValue::F32(vec![1.0, 2.0])),
            Value::Null,
            Value::Str("x".into()),
        ],
    };
    set.push_frame(&row(1), &schema).unwrap();
    set.push_frame(&row(2), &schema).unwrap();
    let batch = set.take(0);
    batch.check_consistent().unwrap();
    assert_eq!(batch.rows(), 2);
    assert!(batch.columns()[1].is_skipped() && !batch.columns()[0].is_skipped());
    assert!(batch.columns()[4].data().is_empty());
    assert_eq!(batch.row_values(1)[0], Value::UInt(2));
    assert_eq!(batch.row_values(1)[2], Value::Null);
    assert!(set.stream(0).columns()[2].is_skipped());
}

#[test]
fn the_set_fills_wanted_streams_and_reports_full() {
    let a = StreamDesc::new("A", SignalDesc::scalar("t", DType::U64), TimeBase::SECONDS);
    let b = StreamDesc::new("B", SignalDesc::scalar("t", DType::U64), TimeBase::SECONDS);
    let schema = Schema {
        streams: vec![a, b],
    };
    let mut set = BatchSet::with_streams(&schema, 2, |i| i == 1);
    assert!(!set.wants(0) && set.wants(1));
    let frame = FrameBuf {
        stream: 1,
        values: vec![Value::UInt(5)],
    };
    set.push_frame(&frame, &schema).unwrap();
    assert!(!set.is_full());
    set.push_frame(&frame, &schema).unwrap();
    assert!(set.is_full());
    let full = set.take_at_least(2);
    assert_eq!(full.len(), 1);
    assert_eq!(full[0].stream(), 1);
    assert_eq!(set.rows(), 0);
    let stray = FrameBuf {
        stream: 7,
        values: vec![],
    };
    assert!(set.push_frame(&stray, &schema).is_err());
}
