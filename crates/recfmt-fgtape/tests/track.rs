//! KML and GPX tracks of the sample tapes, parsed back with roxmltree.

#![allow(clippy::unwrap_used)] // tests may unwrap

mod common;

use recfmt_core::ReadOptions;
use recfmt_fgtape::normal::NormalTape;
use recfmt_fgtape::signals::SignalValue;
use recfmt_fgtape::track::{
    FEET_TO_METRES, TrackKind, TrackOptions, Tracks, ecef_to_geodetic, write_gpx, write_kml,
};

use common::{SAMPLES, sample};

const KML: &str = "http://www.opengis.net/kml/2.2";
const GX: &str = "http://www.google.com/kml/ext/2.2";
const GPX: &str = "http://www.topografix.com/GPX/1/1";

/// (time, latitude, longitude, altitude in metres) of every frame, decoded directly.
fn decoded_positions(tape: &NormalTape) -> Vec<(f64, f64, f64, f64)> {
    let layout = &tape.header.signals;
    let index = |name: &str| {
        layout
            .signals()
            .iter()
            .position(|s| s.name() == name)
            .unwrap()
    };
    let (lat, lon, alt) = (
        index("/position/latitude-deg"),
        index("/position/longitude-deg"),
        index("/position/altitude-ft"),
    );
    tape.frames_in_time_order()
        .map(|f| {
            let v = |i| layout.value(&f.signals, i).unwrap().as_f64();
            (f.time, v(lat), v(lon), v(alt) * FEET_TO_METRES)
        })
        .collect()
}

fn children<'a, 'i>(
    node: roxmltree::Node<'a, 'i>,
    ns: &'a str,
    name: &'a str,
) -> impl Iterator<Item = roxmltree::Node<'a, 'i>> + 'a {
    node.children()
        .filter(move |c| c.is_element() && c.has_tag_name((ns, name)))
}

fn child<'a, 'i>(
    node: roxmltree::Node<'a, 'i>,
    ns: &'a str,
    name: &'a str,
) -> roxmltree::Node<'a, 'i> {
    children(node, ns, name)
        .next()
        .unwrap_or_else(|| panic!("no {name} under {:?}", node.tag_name()))
}

fn text<'a>(node: roxmltree::Node<'a, '_>) -> &'a str {
    node.text().unwrap_or("")
}

/// The Placemarks of a KML document: (name, placemark node).
fn placemarks<'a, 'i>(doc: &'a roxmltree::Document<'i>) -> Vec<(String, roxmltree::Node<'a, 'i>)> {
    doc.descendants()
        .filter(|n| n.has_tag_name((KML, "Placemark")))
        .map(|p| (text(child(p, KML, "name")).to_owned(), p))
        .collect()
}

#[test]
fn kml_without_epoch_has_one_coordinate_per_frame() {
    for name in SAMPLES {
        let Some(path) = sample(name) else { return };
        let tape = NormalTape::open(&path).unwrap();
        let expected = decoded_positions(&tape);
        let tracks = Tracks::open(&path, &ReadOptions::default()).unwrap();
        assert_eq!(tracks.skipped, 0, "{name}");
        let kml = write_kml(&tracks, Vec::new(), &TrackOptions::default()).unwrap();
        let kml = String::from_utf8(kml).unwrap();
        let doc = roxmltree::Document::parse(&kml).unwrap();
        let root = doc.root_element();
        assert!(root.has_tag_name((KML, "kml")), "{name}");
        let marks = placemarks(&doc);
        let (aircraft, mark) = &marks[0];
        assert_eq!(
            aircraft,
            tape.header
                .meta
                .tree
                .get("meta/aircraft-type")
                .unwrap()
                .string_value()
                .unwrap()
        );
        let line = child(*mark, KML, "LineString");
        assert_eq!(text(child(line, KML, "altitudeMode")), "absolute");
        let coords: Vec<&str> = text(child(line, KML, "coordinates"))
            .split_whitespace()
            .collect();
        assert_eq!(coords.len(), expected.len(), "{name}");
        let data = child(child(*mark, KML, "ExtendedData"), KML, "Data");
        assert_eq!(data.attribute("name"), Some("replay_seconds"));
        let times: Vec<f64> = text(child(data, KML, "value"))
            .split_whitespace()
            .map(|t| t.parse().unwrap())
            .collect();
        assert_eq!(times.len(), expected.len(), "{name}");
        // Spot checks, exact: the text is the shortest round-trip form of the same f64.
        let n = expected.len();
        for i in [0, 1, n / 3, n / 2, n - 2, n - 1] {
            let (t, lat, lon, alt) = expected[i];
            let parts: Vec<f64> = coords[i].split(',').map(|v| v.parse().unwrap()).collect();
            assert_eq!(parts, vec![lon, lat, alt], "{name} point {i}");
            assert_eq!(times[i], t, "{name} point {i}");
        }
        // Sanity of the position itself.
        let (_, lat, lon, alt) = expected[n / 2];
        if name.contains("c172p") {
            assert!(
                (37.0..38.5).contains(&lat) && (-123.0..-122.0).contains(&lon),
                "{lat} {lon}"
            );
        } else {
            // dr400 near LFLG (Grenoble-Le Versoud).
            assert!(
                (44.5..46.0).contains(&lat) && (5.0..6.5).contains(&lon),
                "{lat} {lon}"
            );
        }
        assert!((-100.0..10_000.0).contains(&alt), "{alt}");
        assert_eq!(
            marks.len(),
            if name.contains("mp-short") { 2 } else { 1 },
            "{name}"
        );
    }
}

#[test]
fn kml_with_epoch_uses_gx_track_with_when() {
    let Some(path) = sample(SAMPLES[2]) else {
        return;
    };
    let tape = NormalTape::open(&path).unwrap();
    let expected = decoded_positions(&tape);
    let tracks = Tracks::open(&path, &ReadOptions::default()).unwrap();
    // 2024-05-01T12:00:00Z.
    let epoch = 1_714_564_800.0;
    let kml = write_kml(&tracks, Vec::new(), &TrackOptions::with_epoch(epoch)).unwrap();
    let kml = String::from_utf8(kml).unwrap();
    let doc = roxmltree::Document::parse(&kml).unwrap();
    let marks = placemarks(&doc);
    let track = child(marks[0].1, GX, "Track");
    assert_eq!(text(child(track, KML, "altitudeMode")), "absolute");
    let whens: Vec<&str> = children(track, KML, "when").map(text).collect();
    let coords: Vec<&str> = children(track, GX, "coord").map(text).collect();
    assert_eq!(whens.len(), expected.len());
    assert_eq!(coords.len(), expected.len());
    // The c172p samples start at replay second 1.0.
    assert_eq!(expected[0].0, 1.0);
    assert_eq!(whens[0], "2024-05-01T12:00:01.000Z");
    let last = expected.last().unwrap();
    let parts: Vec<f64> = coords
        .last()
        .unwrap()
        .split(' ')
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(parts, vec![last.2, last.1, last.3]);
    // Whens rise with the frames.
    assert!(whens.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn gpx_has_one_trkpt_per_frame_with_1970_times_by_default() {
    for name in SAMPLES {
        let Some(path) = sample(name) else { return };
        let tape = NormalTape::open(&path).unwrap();
        let expected = decoded_positions(&tape);
        let tracks = Tracks::open(&path, &ReadOptions::default()).unwrap();
        let gpx = write_gpx(&tracks, Vec::new(), &TrackOptions::default()).unwrap();
        let gpx = String::from_utf8(gpx).unwrap();
        let doc = roxmltree::Document::parse(&gpx).unwrap();
        let root = doc.root_element();
        assert!(root.has_tag_name((GPX, "gpx")));
        assert_eq!(root.attribute("version"), Some("1.1"));
        let trks: Vec<_> = children(root, GPX, "trk").collect();
        let trk = trks[0];
        assert_eq!(text(child(trk, GPX, "type")), "aircraft");
        let points: Vec<_> = children(child(trk, GPX, "trkseg"), GPX, "trkpt").collect();
        assert_eq!(points.len(), expected.len(), "{name}");
        let n = expected.len();
        for i in [0, n / 2, n - 1] {
            let (t, lat, lon, alt) = expected[i];
            let p = points[i];
            assert_eq!(p.attribute("lat").unwrap().parse::<f64>().unwrap(), lat);
            assert_eq!(p.attribute("lon").unwrap().parse::<f64>().unwrap(), lon);
            assert_eq!(text(child(p, GPX, "ele")).parse::<f64>().unwrap(), alt);
            let when = text(child(p, GPX, "time"));
            let ms = (t * 1000.0).round() as i64;
            assert!(when.starts_with("1970-01-01T00:"), "{when}");
            let secs = &when[14..when.len() - 1];
            let (m, s) = secs.split_once(':').unwrap();
            let got = m.parse::<i64>().unwrap() * 60_000
                + (s.parse::<f64>().unwrap() * 1000.0).round() as i64;
            assert_eq!(got, ms, "{name} point {i}: {when} vs {t}");
        }
        let mp = trks.len() - 1;
        assert_eq!(mp, usize::from(name.contains("mp-short")), "{name}");
    }
}

#[test]
fn multiplayer_callsign_track_from_ecef_positions() {
    let Some(path) = sample(SAMPLES[1]) else {
        return;
    };
    let tracks = Tracks::open(&path, &ReadOptions::default()).unwrap();
    assert_eq!(tracks.multiplayer.len(), 1);
    let mp = &tracks.multiplayer[0];
    assert_eq!(
        (mp.name.as_str(), mp.kind),
        ("MPTEST", TrackKind::Multiplayer)
    );
    assert_eq!(mp.points.len(), 398);
    // The loopback script sent positions computed from 37.62 N, 122.4 W, 900 m, moving east
    // to west in longitude only.
    let first = mp.points[0];
    assert!((first.latitude - 37.62).abs() < 1e-9, "{first:?}");
    assert!((first.longitude + 122.4).abs() < 1e-9, "{first:?}");
    assert!((first.altitude.unwrap() - 900.0).abs() < 1e-6, "{first:?}");
    let last = mp.points.last().unwrap();
    assert!(
        last.longitude < -122.403 && last.longitude > -122.405,
        "{last:?}"
    );
    assert!(mp.points.windows(2).all(|w| w[0].time <= w[1].time));

    // Cross-check one packet against its raw bytes.
    let tape = NormalTape::open(&path).unwrap();
    let packet = tape
        .frames_in_time_order()
        .flat_map(|f| f.multiplayer.iter())
        .next()
        .unwrap();
    let xyz: Vec<f64> = (0..3)
        .map(|k| f64::from_be_bytes(packet[144 + 8 * k..152 + 8 * k].try_into().unwrap()))
        .collect();
    let (lat, lon, h) = ecef_to_geodetic([xyz[0], xyz[1], xyz[2]]);
    assert_eq!(
        (first.latitude, first.longitude, first.altitude),
        (lat, lon, Some(h))
    );

    // KML: the multiplayer track sits in a folder; GPX: a second trk.
    let kml = write_kml(&tracks, Vec::new(), &TrackOptions::default()).unwrap();
    let kml = String::from_utf8(kml).unwrap();
    let doc = roxmltree::Document::parse(&kml).unwrap();
    let marks = placemarks(&doc);
    let (name, mark) = &marks[1];
    assert_eq!(name, "MPTEST");
    assert!(mark.parent().unwrap().has_tag_name((KML, "Folder")));
    let coords = text(child(child(*mark, KML, "LineString"), KML, "coordinates"));
    assert_eq!(coords.split_whitespace().count(), 398);

    let gpx = write_gpx(&tracks, Vec::new(), &TrackOptions::default()).unwrap();
    let gpx = String::from_utf8(gpx).unwrap();
    let doc = roxmltree::Document::parse(&gpx).unwrap();
    let trk = children(doc.root_element(), GPX, "trk").nth(1).unwrap();
    assert_eq!(text(child(trk, GPX, "name")), "MPTEST");
    assert_eq!(text(child(trk, GPX, "type")), "multiplayer");
    assert_eq!(
        children(child(trk, GPX, "trkseg"), GPX, "trkpt").count(),
        398
    );

    // Aircraft only.
    let options = TrackOptions {
        aircraft_only: true,
        ..TrackOptions::default()
    };
    let gpx = write_gpx(&tracks, Vec::new(), &options).unwrap();
    let gpx = String::from_utf8(gpx).unwrap();
    assert!(!gpx.contains("MPTEST"));
}

#[test]
fn names_are_escaped_and_decoded_values_match_signal_values() {
    let Some(path) = sample(SAMPLES[0]) else {
        return;
    };
    let mut tracks = Tracks::open(&path, &ReadOptions::default()).unwrap();
    assert_eq!(tracks.title, "dr400-jsbsim");
    tracks.title = "a <b> & \"c\" \u{7}".into();
    let kml = String::from_utf8(write_kml(&tracks, Vec::new(), &TrackOptions::default()).unwrap())
        .unwrap();
    let doc = roxmltree::Document::parse(&kml).unwrap();
    let name = child(child(doc.root_element(), KML, "Document"), KML, "name");
    assert_eq!(text(name), "a <b> & \"c\" \u{FFFD}");
    // The aircraft track's values are the signal values.
    let tape = NormalTape::open(&path).unwrap();
    let layout = &tape.header.signals;
    let frame = tape.frames_in_time_order().nth(100).unwrap();
    let values = layout.decode(&frame.signals).unwrap();
    let lat = layout
        .signals()
        .iter()
        .position(|s| s.name() == "/position/latitude-deg")
        .unwrap();
    let SignalValue::Double(lat) = values[lat] else {
        panic!("latitude is a double in the dr400 tape")
    };
    assert_eq!(tracks.aircraft.as_ref().unwrap().points[100].latitude, lat);
}
