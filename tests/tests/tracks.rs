//! `recfmt convert TAPE --to kml|gpx`: an XML parser reads the tracks, and the aircraft track has
//! one point per recorded frame (the `signals` rows `recfmt info` counts).

use recfmt_tests::{recfmt, samples};

fn frames(tape: &std::path::Path) -> u64 {
    let o = recfmt(&["info", "--json", tape.to_str().unwrap()]);
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    info["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "signals")
        .unwrap()["rows"]
        .as_u64()
        .unwrap()
}

#[test]
fn kml_and_gpx_tracks_have_a_point_per_frame() {
    let work = tempfile::tempdir().unwrap();
    // Outputs are never replaced without --force: each tape gets names of its own.
    for (n, tape) in samples("fgtape", "fgtape").into_iter().enumerate() {
        let expected = frames(&tape);
        for kind in ["kml", "gpx"] {
            let out = work.path().join(format!("{n}-track.{kind}"));
            let o = recfmt(&[
                "convert",
                tape.to_str().unwrap(),
                "--to",
                kind,
                "-o",
                out.to_str().unwrap(),
            ]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
            let text = std::fs::read_to_string(&out).unwrap();
            let doc = roxmltree::Document::parse(&text).unwrap();
            let aircraft_points = if kind == "kml" {
                // The first Placemark is the aircraft; its coordinates are "lon,lat,alt" tuples.
                let placemark = doc
                    .descendants()
                    .find(|n| n.has_tag_name("Placemark"))
                    .unwrap();
                let coords = placemark
                    .descendants()
                    .find(|n| n.has_tag_name("coordinates"))
                    .unwrap();
                let tuples: Vec<&str> = coords.text().unwrap_or("").split_whitespace().collect();
                for t in &tuples {
                    let parts: Vec<f64> = t.split(',').map(|x| x.parse().unwrap()).collect();
                    assert_eq!(parts.len(), 3, "{t}");
                    assert!(
                        (-180.0..=180.0).contains(&parts[0]) && (-90.0..=90.0).contains(&parts[1])
                    );
                }
                tuples.len()
            } else {
                let trk = doc.descendants().find(|n| n.has_tag_name("trk")).unwrap();
                trk.descendants()
                    .filter(|n| n.has_tag_name("trkpt"))
                    .count()
            };
            assert_eq!(
                aircraft_points as u64,
                expected,
                "{} {kind}",
                tape.display()
            );
            let multiplayer = doc
                .descendants()
                .filter(|n| n.has_tag_name(if kind == "kml" { "Placemark" } else { "trk" }))
                .count()
                - 1;
            let name = tape.file_name().unwrap().to_string_lossy();
            assert_eq!(
                multiplayer,
                usize::from(name.contains("-mp-")),
                "{name} {kind}: multiplayer tracks"
            );
        }
    }
}
