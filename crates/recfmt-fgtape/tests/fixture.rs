//! Hand-written Continuous tapes (spec §5), independent of this crate's writer.
//!
//! Every byte below is spelled out from the byte layout in `shared/specs/fgtape.md` §5, with a
//! comment per field; none of it was produced by `continuous::Writer`. The one exception is
//! the DEFLATE stream of the second compressed frame, made by zlib 1.2.13 (the library
//! FlightGear uses) through Python: `zlib.compressobj(-1, zlib.DEFLATED, -15, 8)`, i.e.
//! FlightGear's `deflateInit2(level default, windowBits -15, memLevel 8)`, over the bytes of
//! `FRAME1_ITEMS`. The first compressed frame uses a hand-written *stored* DEFLATE block.
//!
//! The header lists the signals out of frame order (bools first), so the test also checks
//! that the reader lays them out by type: double, float, int, int16, int8, then the bools
//! packed LSB first.

#![allow(clippy::unwrap_used)] // tests may unwrap

use recfmt_core::{FrameBuf, IntegrityStatus, ReadOptions, RecordingReader, Value};
use recfmt_fgtape::FgTape;
use recfmt_fgtape::continuous::{
    ContinuousFrame, ExtraProperty, Reader, Writer, decode_extra_properties,
};
use recfmt_fgtape::mp::{MP_MAGIC, MpHeader, split_u16_packets};
use recfmt_fgtape::signals::{Interpolation, SignalType, SignalValue};

/// `"FlightGear Flight Recorder Tape"` and its NUL: 32 bytes at offset 0.
const MAGIC: &[u8; 32] = b"FlightGear Flight Recorder Tape\0";

/// The header XML; `@` is replaced by the `continuous-compression` digit.
const XML: &str = r#"<?xml version="1.0"?>

<PropertyList>
  <meta>
    <aircraft-type type="string">ufo</aircraft-type>
    <tape-duration type="double">0</tape-duration>
    <continuous-compression type="int">@</continuous-compression>
  </meta>
  <data type="string">signals</data>
  <data n="1" type="string">multiplayer</data>
  <data n="2" type="string">extra-properties</data>
  <signals>
    <signals>
      <signal><type type="string">bool</type><property type="string">/gear[0]/gear[0]/wow[0]</property></signal>
      <signal n="1"><type type="string">bool</type><property type="string">/gear[0]/gear[1]/wow[0]</property></signal>
      <signal n="2"><type type="string">bool</type><property type="string">/gear[0]/gear[2]/wow[0]</property></signal>
      <signal n="3"><type type="string">bool</type><property type="string">/controls[0]/gear[0]/brake-parking[0]</property></signal>
      <signal n="4"><type type="string">bool</type><property type="string">/sim[0]/freeze[0]/clock[0]</property></signal>
      <signal n="5"><type type="string">bool</type><property type="string">/sim[0]/freeze[0]/fuel[0]</property></signal>
      <signal n="6"><type type="string">bool</type><property type="string">/controls[0]/lighting[0]/nav-lights[0]</property></signal>
      <signal n="7"><type type="string">bool</type><property type="string">/controls[0]/lighting[0]/beacon[0]</property></signal>
      <signal n="8"><type type="string">bool</type><property type="string">/controls[0]/lighting[0]/strobe[0]</property></signal>
      <signal n="9"><type type="string">int8</type><property type="string">/controls[0]/switches[0]/magnetos[0]</property></signal>
      <signal n="10"><type type="string">double</type><interpolation type="string">linear</interpolation><property type="string">/position[0]/altitude-ft[0]</property></signal>
      <signal n="11"><type type="string">float</type><interpolation type="string">angular-deg</interpolation><property type="string">/orientation[0]/roll-deg[0]</property></signal>
      <signal n="12"><type type="string">int16</type><property type="string">/instrumentation[0]/transponder[0]/id-code[0]</property></signal>
      <signal n="13"><type type="string">int</type><interpolation type="string">discrete</interpolation><property type="string">/controls[0]/engines[0]/active-engine[0]</property></signal>
    </signals>
    <recorder>
      <record-size type="int">29</record-size>
    </recorder>
  </signals>
</PropertyList>
"#;

/// u32 LE header length: the XML's 2454 bytes plus its NUL = 2455 = 0x0997.
const XML_LEN: [u8; 4] = [0x97, 0x09, 0x00, 0x00];

/// Frame 0 time: f64 LE 1.5 = 0x3ff8_0000_0000_0000.
const TIME0: [u8; 8] = [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8, 0x3f];
/// Frame 1 time: f64 LE 1.75 = 0x3ffc_0000_0000_0000.
const TIME1: [u8; 8] = [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xfc, 0x3f];

/// Frame 0's item list (§5.3): every item as `u32 len` + payload, in `data[]` order.
#[rustfmt::skip]
const FRAME0_ITEMS: &[u8] = &[
    // item 0, signals: u32 len 29 = record_size (21 bytes of values + 8 unused)
    0x1d, 0x00, 0x00, 0x00,
    //   double /position/altitude-ft = 1000.0 (0x408f_4000_0000_0000)
    0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x8f, 0x40,
    //   float /orientation/roll-deg = -12.5 (0xc148_0000)
    0x00, 0x00, 0x48, 0xc1,
    //   int /controls/engines/active-engine = 2
    0x02, 0x00, 0x00, 0x00,
    //   int16 /instrumentation/transponder/id-code = 7700 (0x1e14)
    0x14, 0x1e,
    //   int8 /controls/switches/magnetos = 3
    0x03,
    //   bools 0-7, LSB first: wow0=1 wow1=0 wow2=1 brake=1 clock=0 fuel=0 nav=0 beacon=0
    0b0000_1101,
    //   bool 8 (strobe) = 1 in bit 0; bits 1-7 unused, zero
    0b0000_0001,
    //   8 unused bytes
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // item 1, multiplayer: u32 len 38 = one packet (u16 len + 36 bytes)
    0x26, 0x00, 0x00, 0x00,
    //   u16 len 36
    0x24, 0x00,
    //   MP header, partly host order (§7): magic 0x46474653 LE
    0x53, 0x46, 0x47, 0x46,
    //   version 0x00010001 LE
    0x01, 0x00, 0x01, 0x00,
    //   MsgId 1 (chat) LE
    0x01, 0x00, 0x00, 0x00,
    //   MsgLen 36 LE
    0x24, 0x00, 0x00, 0x00,
    //   RequestedRangeNm 100, still big-endian
    0x00, 0x00, 0x00, 0x64,
    //   ReplyPort 5000 (0x1388) LE
    0x88, 0x13, 0x00, 0x00,
    //   Callsign[8] "FIX", NUL-padded
    b'F', b'I', b'X', 0x00, 0x00, 0x00, 0x00, 0x00,
    //   body: "hi!" and a NUL
    b'h', b'i', b'!', 0x00,
    // item 2, extra-properties: u32 len 26
    0x1a, 0x00, 0x00, 0x00,
    //   change: i16 plen 9, "/sim/view", i16 vlen 4, "42.5"
    0x09, 0x00, b'/', b's', b'i', b'm', b'/', b'v', b'i', b'e', b'w',
    0x04, 0x00, b'4', b'2', b'.', b'5',
    //   removal: i16 0, i16 plen 5, "/gone"
    0x00, 0x00, 0x05, 0x00, b'/', b'g', b'o', b'n', b'e',
];

/// Frame 1's item list: signals only, empty multiplayer and extra-properties items.
#[rustfmt::skip]
const FRAME1_ITEMS: &[u8] = &[
    // item 0, signals: u32 len 29
    0x1d, 0x00, 0x00, 0x00,
    //   double altitude-ft = -0.5 (0xbfe0_0000_0000_0000)
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0xbf,
    //   float roll-deg = 0.0
    0x00, 0x00, 0x00, 0x00,
    //   int active-engine = -1
    0xff, 0xff, 0xff, 0xff,
    //   int16 id-code = -32768
    0x00, 0x80,
    //   int8 magnetos = -128
    0x80,
    //   bools 0-7 all set, bool 8 set
    0xff, 0x01,
    //   8 unused bytes
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // item 1, multiplayer: u32 len 0
    0x00, 0x00, 0x00, 0x00,
    // item 2, extra-properties: u32 len 0
    0x00, 0x00, 0x00, 0x00,
];

/// Frame 0 compressed (§5.4), after its time: flags, csize, and a stored DEFLATE block.
#[rustfmt::skip]
const FRAME0_COMPRESSED_HEAD: &[u8] = &[
    // u8 flags: signals | multiplayer (non-empty) | extra-properties (non-empty)
    0b0000_0111,
    // u32 csize: 5 block header bytes + 105 stored bytes = 110
    0x6e, 0x00, 0x00, 0x00,
    // DEFLATE stored block: BFINAL=1, BTYPE=00, then LEN 105 and NLEN !105, LE
    0x01, 0x69, 0x00, 0x96, 0xff,
    // ... followed by the 105 bytes of FRAME0_ITEMS
];

/// Frame 1 compressed: flags, csize and zlib's raw DEFLATE of `FRAME1_ITEMS`.
#[rustfmt::skip]
const FRAME1_COMPRESSED: &[u8] = &[
    // u8 flags: signals only (the other items are empty)
    0b0000_0001,
    // u32 csize 19
    0x13, 0x00, 0x00, 0x00,
    // raw DEFLATE (fixed Huffman block) from zlib 1.2.13
    0x93, 0x65, 0x80, 0x81, 0x07, 0xfb, 0x41, 0xe4, 0x7f, 0x20,
    0x60, 0x68, 0x68, 0xf8, 0xcf, 0xc8, 0x80, 0x06, 0x00,
];

fn xml(compression: char) -> String {
    XML.replace('@', &compression.to_string())
}

fn header(compression: char) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&XML_LEN);
    out.extend_from_slice(xml(compression).as_bytes());
    out.push(0); // the NUL counted in XML_LEN
    out
}

fn uncompressed_fixture() -> Vec<u8> {
    let mut out = header('0');
    for part in [&TIME0[..], FRAME0_ITEMS, &TIME1, FRAME1_ITEMS] {
        out.extend_from_slice(part);
    }
    out
}

fn compressed_fixture() -> Vec<u8> {
    let mut out = header('1');
    for part in [
        &TIME0[..],
        FRAME0_COMPRESSED_HEAD,
        FRAME0_ITEMS,
        &TIME1,
        FRAME1_COMPRESSED,
    ] {
        out.extend_from_slice(part);
    }
    out
}

#[test]
fn the_fixture_itself_is_consistent() {
    let text = xml('0');
    assert_eq!(
        u32::from_le_bytes(XML_LEN) as usize,
        text.len() + 1,
        "XML_LEN must be the XML length plus the NUL"
    );
    assert_eq!(FRAME0_ITEMS.len(), 105);
    assert_eq!(FRAME1_ITEMS.len(), 41);
    // The stored block's LEN/NLEN and csize agree with the items.
    assert_eq!(
        u16::from_le_bytes([FRAME0_COMPRESSED_HEAD[6], FRAME0_COMPRESSED_HEAD[7]]),
        105
    );
    assert_eq!(
        u16::from_le_bytes([FRAME0_COMPRESSED_HEAD[8], FRAME0_COMPRESSED_HEAD[9]]),
        !105u16
    );
    assert_eq!(FRAME0_COMPRESSED_HEAD[1], 5 + 105);
    assert_eq!(
        usize::from(FRAME1_COMPRESSED[1]),
        FRAME1_COMPRESSED.len() - 5
    );
}

fn expected_values(frame: usize) -> Vec<SignalValue> {
    let bools: [bool; 9] = if frame == 0 {
        [true, false, true, true, false, false, false, false, true]
    } else {
        [true; 9]
    };
    let mut v = if frame == 0 {
        vec![
            SignalValue::Double(1000.0),
            SignalValue::Float(-12.5),
            SignalValue::Int(2),
            SignalValue::Int16(7700),
            SignalValue::Int8(3),
        ]
    } else {
        vec![
            SignalValue::Double(-0.5),
            SignalValue::Float(0.0),
            SignalValue::Int(-1),
            SignalValue::Int16(-32768),
            SignalValue::Int8(-128),
        ]
    };
    v.extend(bools.map(SignalValue::Bool));
    v
}

fn check_frames(bytes: &[u8], compressed: bool) -> Vec<ContinuousFrame> {
    let mut r = Reader::new(bytes).unwrap();
    let h = r.header().clone();
    assert_eq!(h.data, ["signals", "multiplayer", "extra-properties"]);
    assert_eq!(h.compression, compressed);
    assert!(!h.is_recovery_like());
    assert_eq!(r.frames_start(), 32 + 4 + 2455);
    let layout = h.signals.as_ref().unwrap();
    assert_eq!(layout.record_size(), 29);
    let names: Vec<(String, SignalType)> =
        layout.signals().iter().map(|s| (s.name(), s.ty)).collect();
    assert_eq!(
        names[0],
        ("/position/altitude-ft".into(), SignalType::Double)
    );
    assert_eq!(
        names[1],
        ("/orientation/roll-deg".into(), SignalType::Float)
    );
    assert_eq!(layout.signals()[1].interpolation, Interpolation::AngularDeg);
    assert_eq!(
        names[2],
        ("/controls/engines/active-engine".into(), SignalType::Int)
    );
    assert_eq!(
        names[3],
        (
            "/instrumentation/transponder/id-code".into(),
            SignalType::Int16
        )
    );
    assert_eq!(
        names[4],
        ("/controls/switches/magnetos".into(), SignalType::Int8)
    );
    assert_eq!(names[5], ("/gear/gear/wow".into(), SignalType::Bool));
    assert_eq!(
        names[13],
        ("/controls/lighting/strobe".into(), SignalType::Bool)
    );

    let mut frames = Vec::new();
    let mut f = ContinuousFrame::default();
    while r.read_frame(&mut f).unwrap() {
        frames.push(f.clone());
    }
    assert!(r.truncated().is_none());
    assert!(r.warnings().is_empty(), "{:?}", r.warnings());
    assert_eq!(frames.len(), 2);
    assert_eq!((frames[0].time, frames[1].time), (1.5, 1.75));
    for (i, f) in frames.iter().enumerate() {
        assert_eq!(f.items[0].len(), 29);
        assert_eq!(
            layout.decode(&f.items[0]).unwrap(),
            expected_values(i),
            "frame {i}"
        );
        assert_eq!(f.items[0][21..], [0; 8]);
        assert_eq!(
            f.deflate.as_ref().map(|d| d.flags),
            compressed.then_some(if i == 0 { 7 } else { 1 })
        );
    }
    // Multiplayer: one chat packet with the mixed-order header.
    let packets = split_u16_packets(&frames[0].items[1]).unwrap();
    assert_eq!(packets.len(), 1);
    let mp = MpHeader::parse(packets[0]).unwrap();
    assert_eq!(mp.magic, MP_MAGIC);
    assert_eq!(mp.version, 0x0001_0001);
    assert_eq!((mp.msg_id, mp.msg_len, mp.requested_range_nm), (1, 36, 100));
    assert_eq!((mp.reply_port, mp.callsign()), (5000, "FIX".to_string()));
    assert_eq!(&packets[0][32..], b"hi!\0");
    assert!(frames[1].items[1].is_empty());
    // Extra properties: a change and a removal.
    assert_eq!(
        decode_extra_properties(&frames[0].items[2]).unwrap(),
        vec![
            ExtraProperty::Change {
                path: "/sim/view".into(),
                value: "42.5".into()
            },
            ExtraProperty::Removal {
                path: "/gone".into()
            }
        ]
    );
    assert!(frames[1].items[2].is_empty());
    // Written back, frame by frame, the bytes are the fixture's.
    let mut w = Writer::new(Vec::new(), &h).unwrap();
    for f in &frames {
        w.write_frame(f).unwrap();
    }
    assert_eq!(w.finish().unwrap(), bytes);
    frames
}

#[test]
fn uncompressed_fixture_reads_exactly() {
    check_frames(&uncompressed_fixture(), false);
}

#[test]
fn compressed_fixture_reads_exactly() {
    let frames = check_frames(&compressed_fixture(), true);
    // The stored block and zlib's stream inflate to the same items as the plain fixture.
    let plain = check_frames(&uncompressed_fixture(), false);
    for (c, p) in frames.iter().zip(&plain) {
        assert_eq!(c.items, p.items);
    }
}

#[test]
fn our_writer_matches_the_uncompressed_fixture() {
    let bytes = uncompressed_fixture();
    let r = Reader::new(&bytes[..]).unwrap();
    let mut w = Writer::new(Vec::new(), r.header()).unwrap();
    for (time, items) in [(1.5, FRAME0_ITEMS), (1.75, FRAME1_ITEMS)] {
        // Split the spelled-out item list by hand: u32 len + payload, three times.
        let mut list = Vec::new();
        let mut p = 0;
        for _ in 0..3 {
            let len = u32::from_le_bytes(items[p..p + 4].try_into().unwrap()) as usize;
            list.push(items[p + 4..p + 4 + len].to_vec());
            p += 4 + len;
        }
        assert_eq!(p, items.len());
        w.write_frame(&ContinuousFrame {
            time,
            items: list,
            deflate: None,
        })
        .unwrap();
    }
    assert_eq!(w.finish().unwrap(), bytes);
}

#[test]
fn fixtures_through_the_adapter_and_its_index() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        ("plain.fgtape", uncompressed_fixture()),
        ("deflate.fgtape", compressed_fixture()),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let mut tape = FgTape::open(&path, &ReadOptions::default()).unwrap();
        let names: Vec<_> = tape
            .schema()
            .streams
            .iter()
            .map(|s| s.name.clone())
            .collect();
        assert_eq!(names, ["signals", "multiplayer", "extra_properties"]);
        let mut buf = FrameBuf::default();
        let mut rows = Vec::new();
        while tape.read_frame(&mut buf).unwrap() {
            rows.push((buf.stream, buf.values.clone()));
        }
        assert_eq!(tape.integrity().status, IntegrityStatus::Complete);
        // Frame 0: signals, one MP packet, two extra-property records; frame 1: signals.
        assert_eq!(rows.len(), 5, "{name}");
        let signals = &rows[0].1;
        assert_eq!(signals[0], Value::Float(1.5));
        assert_eq!(signals[1], Value::Float(1000.0));
        assert_eq!(signals[2], Value::Float(-12.5));
        assert_eq!(
            signals[3..6],
            [Value::Int(2), Value::Int(7700), Value::Int(3)]
        );
        assert_eq!(signals[6..8], [Value::Bool(true), Value::Bool(false)]);
        assert_eq!(signals[14], Value::Bool(true));
        assert_eq!(rows[1].0, 1);
        assert_eq!(rows[1].1[1..3], [Value::Str("FIX".into()), Value::UInt(1)]);
        assert_eq!(
            rows[2].1[1..],
            [
                Value::Str("/sim/view".into()),
                Value::Str("42.5".into()),
                Value::Bool(false)
            ]
        );
        assert_eq!(
            rows[3].1[1..],
            [Value::Str("/gone".into()), Value::Null, Value::Bool(true)]
        );
        assert_eq!(rows[4].1[0], Value::Float(1.75));
        assert_eq!(rows[4].1[4], Value::Int(-32768));

        // The index: frame offsets spelled out from the layout.
        let mut r = Reader::new(std::io::Cursor::new(bytes.clone())).unwrap();
        let index = r.index_frames().unwrap();
        let first = 32 + 4 + 2455;
        let second = first + 8 + if name == "plain.fgtape" { 105 } else { 5 + 110 };
        let offsets: Vec<(f64, u64)> = index.frames.iter().map(|e| (e.time, e.offset)).collect();
        assert_eq!(offsets, vec![(1.5, first), (1.75, second)]);
        assert_eq!(
            (index.end, index.stopped.as_deref()),
            (bytes.len() as u64, None)
        );
        // Seeking past frame 0 leaves frame 1.
        let mut tape = FgTape::open(&path, &ReadOptions::default()).unwrap();
        assert!(tape.seek_time(1.6).unwrap());
        assert!(tape.read_frame(&mut buf).unwrap());
        assert_eq!(buf.values[0], Value::Float(1.75));
        assert!(!tape.read_frame(&mut buf).unwrap());
    }
}

#[test]
fn the_index_stops_at_a_corrupt_or_torn_frame() {
    let bytes = uncompressed_fixture();
    let first = 32 + 4 + 2455;
    let second = first + 8 + 105;
    // A torn second frame.
    let mut r = Reader::new(std::io::Cursor::new(bytes[..second + 20].to_vec())).unwrap();
    let index = r.index_frames().unwrap();
    assert_eq!(index.frames.len(), 1);
    assert_eq!(index.end, second as u64);
    assert!(index.stopped.as_deref().unwrap().contains("ends early"));
    assert_eq!(index.seek_offset(1.7), second as u64);
    // A corrupt item length in the second frame (beyond the record limit).
    let mut bad = bytes.clone();
    bad[second + 8 + 3] = 0x7f;
    let mut r = Reader::new(std::io::Cursor::new(bad)).unwrap();
    let index = r.index_frames().unwrap();
    assert_eq!((index.frames.len(), index.end), (1, second as u64));
    assert!(index.stopped.is_some());
    // Reading from the index's end finds the same problem.
    r.seek_frame(index.end).unwrap();
    assert!(r.read_frame(&mut ContinuousFrame::default()).is_err());
    assert!(r.seek_frame(10).is_err());
}
