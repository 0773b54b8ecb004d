//! Pictures of recfmt recordings, as SVG or PNG, in pure Rust (plotters, with an embedded
//! font): no system library is needed.
//!
//! * [`plot_signals`]: chosen signals against time, one panel per unit or per stream.
//! * [`overview`]: every stream's rows over time (rates, gaps, where a truncated file ends).
//! * [`TrackMap`]: tracks seen from above (CARLA actors, aircraft ground tracks), with an
//!   optional altitude profile.
//!
//! Readers are consumed batch by batch ([`recfmt_core::RecordingReader::read_batches`]) and
//! every series is reduced to at most [`Reducer::BUCKETS`] min/max buckets on the way
//! ([`Reducer`]), so memory stays flat however long the recording is.
//!
//! ```
//! use recfmt_core::{BatchSet, DType, Schema, SignalDesc, StreamDesc, TimeBase};
//! # use recfmt_core::{FormatInfo, FrameBuf, Header, Integrity, RecordingReader, Value};
//! # struct Memory { header: Header, schema: Schema, rows: Vec<FrameBuf>, next: usize, integrity: Integrity }
//! # static INFO: FormatInfo = FormatInfo { id: "memory", name: "In-memory rows", extensions: &[] };
//! # impl RecordingReader for Memory {
//! #     fn format(&self) -> &'static FormatInfo { &INFO }
//! #     fn header(&self) -> &Header { &self.header }
//! #     fn schema(&self) -> &Schema { &self.schema }
//! #     fn integrity(&self) -> &Integrity { &self.integrity }
//! #     fn read_frame(&mut self, dst: &mut FrameBuf) -> recfmt_core::Result<bool> {
//! #         let Some(row) = self.rows.get(self.next) else { return Ok(false) };
//! #         dst.clone_from(row);
//! #         self.next += 1;
//! #         Ok(true)
//! #     }
//! # }
//! let mut nav = StreamDesc::new("NAV", SignalDesc::scalar("t", DType::F64), TimeBase::SECONDS);
//! nav.signals.push(SignalDesc::scalar("x", DType::F32).with_unit("m"));
//! # let rows = (0..100).map(|i| FrameBuf { stream: 0, values: vec![Value::Float(f64::from(i)), Value::Float(f64::from(i).sin())] }).collect();
//! # let reader = Memory { header: Header { format: "memory", ..Header::default() }, schema: Schema { streams: vec![nav] }, rows, next: 0, integrity: Integrity::default() };
//! let options = recfmt_plot::SignalOptions { title: "demo".into(), ..Default::default() };
//! let figure = recfmt_plot::plot_signals(Box::new(reader), &options)?;
//! let svg = String::from_utf8(figure.render(recfmt_plot::ImageKind::Svg, 800, None)?)?;
//! assert!(svg.contains("NAV.x [m]"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod draw;
mod overview;
mod reduce;
mod signals;
mod tracks;

use std::path::{Path, PathBuf};

pub use overview::{Overview, StreamLane, overview};
pub use reduce::{Bucket, Point, Reducer};
pub use signals::{
    MAX_ELEMENTS, MAX_ENTITIES, MAX_SERIES, Panel, Panels, Series, SignalOptions, SignalPlot,
    plot_signals,
};
pub use tracks::{MAX_TRACK_POINTS, MapTrack, TrackMap, TrackPoint, xy_tracks};

/// What went wrong while reading or drawing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading the recording failed.
    #[error(transparent)]
    Read(#[from] recfmt_core::Error),
    /// The output could not be written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The output.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Drawing failed (plotters' own error, as text).
    #[error("drawing failed: {0}")]
    Draw(String),
    /// The request cannot be drawn (no numeric signal matches, unknown output kind, ...).
    #[error("{0}")]
    Invalid(String),
}

/// Results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The image kinds a figure renders to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageKind {
    /// Scalable vector graphics: text stays text.
    Svg,
    /// A PNG bitmap (8-bit RGB).
    Png,
}

impl ImageKind {
    /// The kind an output path asks for by its extension (`.svg` or `.png`).
    pub fn from_path(path: &Path) -> Result<Self> {
        match path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .as_deref()
        {
            Some("svg") => Ok(ImageKind::Svg),
            Some("png") => Ok(ImageKind::Png),
            _ => Err(Error::Invalid(format!(
                "{}: the output must end in .svg or .png",
                path.display()
            ))),
        }
    }
}

/// A picture ready to render at any size.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Figure {
    /// Signals against time.
    Signals(SignalPlot),
    /// Every stream's rows over time.
    Overview(Overview),
    /// Tracks from above.
    Map(TrackMap),
}

impl Figure {
    /// The height used when none is asked for: enough for every panel or lane.
    pub fn default_height(&self) -> u32 {
        match self {
            Figure::Signals(p) => 80 + 260 * u32::try_from(p.panels.len().max(1)).unwrap_or(8),
            Figure::Overview(o) => {
                (110 + 46 * u32::try_from(o.lanes.len()).unwrap_or(100)).clamp(240, 4000)
            }
            Figure::Map(m) => {
                if m.profile {
                    1000
                } else {
                    800
                }
            }
        }
    }

    /// Renders the figure `width` pixels wide and `height` (default
    /// [`Figure::default_height`]) high.
    pub fn render(&self, kind: ImageKind, width: u32, height: Option<u32>) -> Result<Vec<u8>> {
        let height = height.unwrap_or_else(|| self.default_height());
        if !(64..=16_384).contains(&width) || !(64..=16_384).contains(&height) {
            return Err(Error::Invalid(format!(
                "an image of {width}x{height} pixels: width and height must be 64 to 16384"
            )));
        }
        draw::render(self, kind, (width, height))
    }

    /// Renders into `path` (kind from its extension), written under a temporary name and
    /// renamed when complete; an existing file is replaced only as `replace` allows.
    pub fn write(
        &self,
        path: &Path,
        width: u32,
        height: Option<u32>,
        replace: recfmt_core::Replace,
    ) -> Result<()> {
        use std::io::Write;
        let kind = ImageKind::from_path(path)?;
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        recfmt_core::atomic::check_target(path, replace).map_err(io)?;
        let bytes = self.render(kind, width, height)?;
        let mut file = recfmt_core::AtomicFile::create(path, replace).map_err(io)?;
        file.write_all(&bytes).map_err(io)?;
        file.commit().map_err(io)
    }
}

/// The colour of the `i`-th line of a panel (or lane, or track), as RGB: lines are drawn
/// one pixel wide in exactly this colour, so a picture can be checked pixel by pixel.
pub fn series_color(i: usize) -> (u8, u8, u8) {
    use plotters::style::{Color, Palette, Palette99};
    let _ = Palette99::COLORS;
    let c = plotters::style::PaletteColor::<Palette99>::pick(i).to_rgba();
    (c.0, c.1, c.2)
}

/// A title for a recording: its file name and format.
pub fn title_for(path: &Path, reader: &dyn recfmt_core::RecordingReader) -> String {
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    format!(
        "{name} ({}, {})",
        reader.format().name,
        reader.header().version
    )
}

/// A value of column element `i` as `f64` (booleans as 0 and 1); `None` for text and bytes.
pub(crate) fn element_f64(data: &recfmt_core::ColumnData, i: usize) -> Option<f64> {
    use recfmt_core::ColumnData as C;
    Some(match data {
        C::Bool(v) => f64::from(u8::from(*v.get(i)?)),
        C::I8(v) => f64::from(*v.get(i)?),
        C::I16(v) => f64::from(*v.get(i)?),
        C::I32(v) => f64::from(*v.get(i)?),
        C::I64(v) => *v.get(i)? as f64,
        C::U8(v) => f64::from(*v.get(i)?),
        C::U16(v) => f64::from(*v.get(i)?),
        C::U32(v) => f64::from(*v.get(i)?),
        C::U64(v) => *v.get(i)? as f64,
        C::F32(v) => f64::from(*v.get(i)?),
        C::F64(v) => *v.get(i)?,
        _ => return None,
    })
}

/// Reads `reader` to the end in batches of the wanted streams and columns, calling `each`
/// with every batch.
pub(crate) fn for_each_batch(
    reader: &mut dyn recfmt_core::RecordingReader,
    batches: recfmt_core::BatchSet,
    each: &mut dyn FnMut(&recfmt_core::StreamBatch) -> Result<()>,
) -> Result<()> {
    for batch in recfmt_select::StreamBatchReader::new(reader, batches) {
        each(&batch?)?;
    }
    Ok(())
}
