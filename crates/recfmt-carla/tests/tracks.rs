//! Tracks table → recording → read back.

use std::io::Cursor;

use recfmt_carla::tracks::{TrackCsvReader, TrackLogWriter, TrackOptions, TrackRow};
use recfmt_carla::{CarlaRecording, Flavour, Packet, PacketKind, Reader, index_frames};
use recfmt_core::{FrameBuf, ReadOptions, RecordingReader, Value};

const CSV: &str = "\
# trajectories exported from a tracker
time,id,blueprint,x,y,z,roll,pitch,yaw,speed
10.00,1,vehicle.tesla.model3,1.5,-20.25,0.1,0,0,90,3.0
10.00,2,\"walker.pedestrian.0001\",5,5,0.9,0,0,180.5,1.0

10.05,1,vehicle.tesla.model3,1.65,-20.25,0.1,0,0.5,90,3.0
10.05,2,walker.pedestrian.0001,5,5.05,0.9,0,0,180.5,1.0
10.05,3,vehicle.audi.tt,100.123456,200.5,0.2,0.1,0.2,-45,7.5
10.10,1,vehicle.tesla.model3,1.8,-20.25,0.1,0,0.5,90,3.0
10.10,3,vehicle.audi.tt,100.5,200.5,0.2,0.1,0.2,-45,7.5
10.25,3,vehicle.audi.tt,101.0,200.5,0.2,0.1,0.2,-45,7.5
";

fn rows() -> Vec<TrackRow> {
    TrackCsvReader::new(CSV.as_bytes())
        .expect("header")
        .collect::<Result<Vec<_>, _>>()
        .expect("rows")
}

fn write(flavour: Flavour) -> Vec<u8> {
    let options = TrackOptions {
        map: "Town04".into(),
        date: 1_650_000_000,
        ..TrackOptions::new(flavour)
    };
    let mut w = TrackLogWriter::new(Cursor::new(Vec::new()), &options).expect("writer");
    for r in rows() {
        w.push(r).expect("row");
    }
    let (out, summary) = w.finish().expect("finish");
    assert_eq!(summary.rows, 8);
    assert_eq!(summary.frames, 4);
    assert_eq!(summary.actors, 3);
    assert_eq!(summary.created, 3);
    assert_eq!(summary.destroyed, 2);
    assert_eq!(summary.start_time, 10.0);
    out.into_inner()
}

#[test]
fn csv_rows_parse() {
    let rows = rows();
    assert_eq!(rows.len(), 8);
    assert_eq!(rows[1].blueprint, "walker.pedestrian.0001");
    assert_eq!(rows[4].x, 100.123456);
    assert_eq!(rows[4].yaw, -45.0);
    assert_eq!(rows[0].uid, 0);
    assert_eq!(rows[0].role_name, None);
}

#[test]
fn tracks_round_trip_through_the_adapter_in_every_flavour() {
    let rows = rows();
    for flavour in Flavour::ALL {
        let bytes = write(flavour);

        // Every packet decodes with its size checked, in CARLA's per-frame order.
        let mut reader = Reader::new(&bytes[..]).with_flavour(Some(flavour));
        let header = reader.read_header().expect("header");
        assert_eq!(header.map, "Town04");
        assert_eq!(header.version, flavour.header_version());
        let mut p = Packet::default();
        let mut kinds = Vec::new();
        while reader.read_packet(&mut p).expect("packet") {
            kinds.push(p.kind().expect("known kind"));
        }
        let order: Vec<PacketKind> = flavour
            .frame_order(false)
            .into_iter()
            .filter(|(_, always)| *always)
            .map(|(k, _)| k)
            .collect();
        assert_eq!(kinds.len(), order.len() * 4, "{flavour}");
        assert_eq!(kinds[..order.len()], order[..], "{flavour}");

        // The frame index: one frame per distinct time, durations chained, -1 last.
        let index = index_frames(&bytes[..], &Default::default()).expect("index");
        assert!(index.error.is_none());
        let elapsed: Vec<f64> = index.frames.iter().map(|f| f.elapsed).collect();
        assert_eq!(elapsed, [0.0, 10.05 - 10.0, 10.10 - 10.0, 10.25 - 10.0]);
        for w in index.frames.windows(2) {
            assert_eq!(w[0].elapsed + w[0].duration_this, w[1].elapsed);
        }
        assert_eq!(index.frames[3].duration_this, -1.0);
        assert_eq!(index.end, bytes.len() as u64);

        // The adapter's streams give the tracks back.
        let mut rec =
            CarlaRecording::new(&bytes[..], &ReadOptions::default(), Some(flavour)).expect("open");
        let schema = rec.schema().clone();
        let position = schema.stream_index("position").expect("position");
        let add = schema.stream_index("event_add").expect("event_add");
        let del = schema.stream_index("event_del").expect("event_del");
        let mut buf = FrameBuf::default();
        let (mut got, mut adds, mut dels) = (Vec::new(), Vec::new(), Vec::new());
        while rec.read_frame(&mut buf).expect("row") {
            let f = |i: usize| buf.values[i].as_f64().expect("number");
            if buf.stream == position {
                got.push((f(0), f(2) as u32, [f(3), f(4), f(5), f(6), f(7), f(8)]));
            } else if buf.stream == add {
                let Value::Str(bp) = &buf.values[11] else {
                    panic!("blueprint")
                };
                let Value::Str(attrs) = &buf.values[12] else {
                    panic!("attributes")
                };
                adds.push((f(0), f(2) as u32, f(3) as u8, bp.clone(), attrs.clone()));
            } else if buf.stream == del {
                dels.push((f(0), f(2) as u32));
            }
        }
        assert!(!rec.integrity().lost_data());
        let want: Vec<(f64, u32, [f64; 6])> = rows
            .iter()
            .map(|r| {
                let cm = |m: f64| {
                    if flavour == Flavour::Ue5 {
                        m * 100.0
                    } else {
                        f64::from((m * 100.0) as f32)
                    }
                };
                let deg = |d: f64| {
                    if flavour == Flavour::Ue5 {
                        d
                    } else {
                        f64::from(d as f32)
                    }
                };
                (
                    r.time - 10.0,
                    r.id,
                    [
                        cm(r.x),
                        cm(r.y),
                        cm(r.z),
                        deg(r.roll),
                        deg(r.pitch),
                        deg(r.yaw),
                    ],
                )
            })
            .collect();
        assert_eq!(got, want, "{flavour}");
        let ids: Vec<(u32, u8)> = adds.iter().map(|a| (a.1, a.2)).collect();
        assert_eq!(ids, [(1, 1), (2, 2), (3, 1)]);
        assert_eq!(adds[2].0, 10.05 - 10.0);
        assert_eq!(adds[1].3, "walker.pedestrian.0001");
        assert_eq!(adds[0].4, "role_name=track_1");
        // 2 is missing at 10.10, 1 at 10.25.
        assert_eq!(dels, [(10.10 - 10.0, 2), (10.25 - 10.0, 1)]);
    }
}

#[test]
fn bad_input_is_named() {
    let mut w = TrackLogWriter::new(
        Cursor::new(Vec::new()),
        &TrackOptions::new(Flavour::Carla0912),
    )
    .expect("writer");
    let row = |time: f64, id: u32| TrackRow {
        time,
        id,
        blueprint: "vehicle.a".into(),
        ..TrackRow::default()
    };
    w.push(row(1.0, 1)).expect("row 1");
    w.push(row(2.0, 1)).expect("row 2");
    let err = w.push(row(1.5, 1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tracks input, row 3: time 1.5 is earlier than the previous row's 2: rows must be sorted by time"
    );
    let err = w.push(row(2.0, 1)).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("tracks input, row 4: actor 1 appears twice")
    );
    let err = w.push(row(f64::NAN, 2)).unwrap_err();
    assert!(
        err.to_string()
            .contains("row 5: time NaN is not a finite number")
    );

    let csv =
        "time,id,blueprint,x,y,z,roll,pitch,yaw\n0,1,v,0,0,0,0,0,0\n\n0.1,1,v,zero,0,0,0,0,0\n";
    let results: Vec<_> = TrackCsvReader::new(csv.as_bytes())
        .expect("header")
        .collect();
    let err = results[1].as_ref().unwrap_err();
    assert_eq!(
        err.to_string(),
        "tracks input, line 4: column x: \"zero\" is not a number"
    );
    let err = TrackCsvReader::new("time;id;x\n".as_bytes()).unwrap_err();
    assert!(
        err.to_string()
            .contains("missing column(s) blueprint, y, z, roll, pitch, yaw")
    );
    let csv = "Time\tID\tBlueprint\tX\tY\tZ\tRoll\tPitch\tYaw\tuid\trole_name\n0\t4\tvehicle.b\t1\t2\t3\t4\t5\t6\t17\thero\n";
    let r = TrackCsvReader::new(csv.as_bytes())
        .expect("header")
        .next()
        .expect("a row")
        .expect("valid");
    assert_eq!(
        (r.uid, r.role_name.as_deref(), r.z),
        (17, Some("hero"), 3.0)
    );
}
