//! FlightGear flight recorder tapes (`.fgtape`).
//!
//! FlightGear saves replay recordings as *Normal* tapes: one gzip stream holding SimGear
//! "gzContainer" records: a magic string, a Meta property list (aircraft, version,
//! duration...), a Config property list (the recorded signals) and three RawData containers of
//! frames (short-, medium- and long-term history). See `shared/specs/fgtape.md` for the byte
//! layout this crate implements.
//!
//! The crate has two levels plus helpers:
//!
//! * low level, faithful: [`props`] (SimGear property lists, parsed and written back),
//!   [`signals`] (the frame signal layout from a Config tree, decoding and encoding values),
//!   [`normal`] (streaming [`normal::Reader`], [`normal::Writer`], [`normal::NormalTape`]);
//!   a tape read and written again gives back the same decompressed bytes;
//! * [`continuous`]: Continuous and Recovery tapes (uncompressed header + frames, optional
//!   per-frame DEFLATE), reader and writer;
//! * [`mp`]: the header of recorded multiplayer packets and the position of `POS_DATA` ones;
//! * the recfmt adapter [`FgTape`] (streams `signals`, `multiplayer`, `extra_properties`;
//!   time-ordered with bounded memory; `seek_time` on Continuous tapes), the generic writer
//!   [`FgTapeWriter`] (the generic model as a Continuous tape) and the registry descriptor
//!   [`FORMAT`];
//! * [`track`]: the aircraft's and each multiplayer callsign's flight track as KML or GPX.
//!
//! Both frame layouts are supported: *legacy* (FlightGear 2.10 to 2020.2, the time inside the
//! record) and *vector* (2020.3 on, time + record + 8 unused bytes + optional multiplayer
//! block). The file does not say which one it uses; the reader tells them apart from the
//! container structure.
//!
//! ```
//! use recfmt_fgtape::normal::{Frame, FrameLayout, Header, NormalTape, RawData};
//! use recfmt_fgtape::props::{PropValue, PropertyList};
//! use recfmt_fgtape::signals::SignalValue;
//!
//! // A one-signal recorder configuration and some metadata.
//! let mut config = PropertyList::new();
//! config.root.set("signals/signal/type", PropValue::string("double"));
//! config.root.set("signals/signal/property", PropValue::string("/position[0]/altitude-ft[0]"));
//! let mut meta = PropertyList::new();
//! meta.root.set("meta/aircraft-type", PropValue::string("c172p"));
//! let header = Header::new(meta, config)?;
//!
//! // Two frames in the 2020.3 layout, written as a gzip-compressed tape.
//! let frames = (0..2)
//!     .map(|i| Frame {
//!         time: 1.0 + f64::from(i),
//!         signals: header.signals.encode(&[SignalValue::Double(1000.0 * f64::from(i))]).unwrap(),
//!         ..Frame::default()
//!     })
//!     .collect();
//! let rs = header.record_size();
//! let tape = NormalTape {
//!     header,
//!     layout: FrameLayout::Vector,
//!     raw_data: [RawData::new(frames, rs), RawData::default(), RawData::default()],
//!     trailing: Vec::new(),
//! };
//! let file = tape.write_gzip(Vec::new())?;
//!
//! // Read it back: the layout is detected, the values decode.
//! let back = NormalTape::read(&file[..])?;
//! assert_eq!(back.layout, FrameLayout::Vector);
//! let last = back.frames_in_time_order().last().unwrap();
//!
//! // Or streamed, container by container, frame by frame.
//! let mut reader = recfmt_fgtape::normal::Reader::new(&file[..])?;
//! reader.read_header()?;
//! let mut times = Vec::new();
//! while reader.next_container()?.is_some() {
//!     for frame in reader.frames() {
//!         times.push(frame?.time);
//!     }
//! }
//! assert_eq!(times, [1.0, 2.0]);
//! assert_eq!(back.header.signals.decode(&last.signals)?, vec![SignalValue::Double(1000.0)]);
//! assert_eq!(back.header.signals.signals()[0].name(), "/position/altitude-ft");
//! # Ok::<(), recfmt_fgtape::Error>(())
//! ```
#![forbid(unsafe_code)]

pub mod acmi;
mod adapter;
pub mod continuous;
pub mod error;
mod hooks;
mod input;
pub mod mp;
pub mod normal;
pub mod props;
pub mod signals;
pub mod track;
mod writer;

pub use adapter::{FORMAT, FgTape, INFO, score};
pub use error::{Error, Offset, Result};
pub use writer::FgTapeWriter;

/// The shared model ([`recfmt_core`]) this crate's adapter implements, re-exported so one
/// dependency is enough.
pub use recfmt_core as core;
