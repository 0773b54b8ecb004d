//! Drawing figures with plotters, onto its SVG or bitmap back end.

use std::sync::OnceLock;

use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::{Error, Figure, ImageKind, Overview, Result, SignalPlot, TrackMap};

/// DejaVu Sans cut down to Latin-1, Greek and a few symbols (see fonts/LICENSE-DejaVu.txt):
/// plotters' `ab_glyph` text needs a font, and a system one would need a system library.
static FONT: &[u8] = include_bytes!("../fonts/DejaVuSans-subset.ttf");
const FAMILY: &str = "sans-serif";

fn register_font() -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED
        .get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok {
        Ok(())
    } else {
        Err(Error::Draw("the embedded font could not be loaded".into()))
    }
}

fn drawing<E: std::fmt::Display>(e: E) -> Error {
    Error::Draw(e.to_string())
}

pub(crate) fn render(figure: &Figure, kind: ImageKind, (w, h): (u32, u32)) -> Result<Vec<u8>> {
    register_font()?;
    match kind {
        ImageKind::Svg => {
            let mut text = String::new();
            {
                let root = SVGBackend::with_string(&mut text, (w, h)).into_drawing_area();
                draw(figure, &root)?;
                root.present().map_err(drawing)?;
            }
            Ok(text.into_bytes())
        }
        ImageKind::Png => {
            let mut pixels = vec![0u8; w as usize * h as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
                draw(figure, &root)?;
                root.present().map_err(drawing)?;
            }
            let mut out = Vec::new();
            let mut encoder = png::Encoder::new(&mut out, w, h);
            encoder.set_color(png::ColorType::Rgb);
            encoder.set_depth(png::BitDepth::Eight);
            // Charts are mostly flat colour: the best deflate level and per-row filters make
            // them several times smaller for little time.
            encoder.set_compression(png::Compression::Best);
            encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
            let mut writer = encoder.write_header().map_err(drawing)?;
            writer.write_image_data(&pixels).map_err(drawing)?;
            writer.finish().map_err(drawing)?;
            Ok(out)
        }
    }
}

fn draw<DB: DrawingBackend>(figure: &Figure, root: &DrawingArea<DB, Shift>) -> Result<()> {
    root.fill(&WHITE).map_err(drawing)?;
    match figure {
        Figure::Signals(p) => signals(p, root),
        Figure::Overview(o) => overview(o, root),
        Figure::Map(m) => map(m, root),
    }
}

/// The narrowest axis, relative to the magnitude of its ends (about a million ulps).
const MIN_RELATIVE_SPAN: f64 = 2e-10;

/// True when `lo..hi` can be an axis as it is: finite, not flat, and not narrower than
/// [`MIN_RELATIVE_SPAN`].
fn drawable(lo: f64, hi: f64) -> bool {
    hi > lo && (hi - lo).is_finite() && hi - lo >= lo.abs().max(hi.abs()) * MIN_RELATIVE_SPAN
}

/// `lo..hi` widened so a flat or empty extent still makes an axis, padded by 5 %; `None`
/// when no finite axis holds it (see [`axis`]).
fn padded(lo: f64, hi: f64) -> Option<(f64, f64)> {
    if !(lo.is_finite() && hi.is_finite()) {
        return Some((0.0, 1.0));
    }
    // Halves first, so neither the middle nor the span overflows on the way.
    let middle = lo / 2.0 + hi / 2.0;
    let half = if hi <= lo {
        (lo.abs() * 0.05).max(0.5)
    } else {
        (hi / 2.0 - lo / 2.0) * 1.1
    };
    // plotters steps its key points from one end: over a span of a few ulps of its ends its
    // loop never gets there (it spins), so an axis spans at least `MIN_RELATIVE_SPAN` of its
    // magnitude.
    let half = half.max(middle.abs() * MIN_RELATIVE_SPAN / 2.0);
    let (a, b) = (
        (middle - half).max(-f64::MAX),
        (middle + half).min(f64::MAX),
    );
    // A padded end beyond the largest double is cut there; the data must still fit.
    (a <= lo && hi <= b && (b - a).is_finite()).then_some((a, b))
}

/// The axis `padded(lo, hi)`, or an error naming `what` when its span is more than a double
/// holds (±1.8e308): plotters' key points never end on an infinite span.
fn axis(what: &str, lo: f64, hi: f64) -> Result<(f64, f64)> {
    padded(lo, hi).ok_or_else(|| {
        Error::Invalid(format!(
            "{what} from {lo:e} to {hi:e}: no axis can show them, their span is more than a floating-point number holds (about 1.8e308)"
        ))
    })
}

fn color(i: usize) -> RGBColor {
    let (r, g, b) = crate::series_color(i);
    RGBColor(r, g, b)
}

fn signals<DB: DrawingBackend>(plot: &SignalPlot, root: &DrawingArea<DB, Shift>) -> Result<()> {
    let root = root
        .titled(&plot.title, (FAMILY, 22).into_font())
        .map_err(drawing)?;
    let bounds: Vec<_> = plot
        .panels
        .iter()
        .flat_map(|p| &p.series)
        .filter_map(|s| s.reduced.bounds())
        .collect();
    let data_x0 = bounds.iter().map(|b| b.0.0).fold(f64::INFINITY, f64::min);
    let data_x1 = bounds
        .iter()
        .map(|b| b.0.1)
        .fold(f64::NEG_INFINITY, f64::max);
    let (mut x0, mut x1) = (data_x0, data_x1);
    if let Some((a, b)) = plot.range {
        if a.is_finite() {
            x0 = a;
        }
        if b.is_finite() {
            x1 = b;
        }
    }
    if !drawable(x0, x1) {
        let what = if plot.range.is_some() {
            "the time range asked for (--start, --end): times"
        } else {
            "times"
        };
        (x0, x1) = axis(what, x0, x1)?;
    }
    let areas = root.split_evenly((plot.panels.len().max(1), 1));
    for (panel, area) in plot.panels.iter().zip(&areas) {
        let lo = panel
            .series
            .iter()
            .filter_map(|s| s.reduced.bounds())
            .map(|b| b.1.0)
            .fold(f64::INFINITY, f64::min);
        let hi = panel
            .series
            .iter()
            .filter_map(|s| s.reduced.bounds())
            .map(|b| b.1.1)
            .fold(f64::NEG_INFINITY, f64::max);
        let (y0, y1) = axis(&format!("panel {:?}: values", panel.caption), lo, hi)?;
        let mut chart = ChartBuilder::on(area)
            .caption(&panel.caption, (FAMILY, 15).into_font())
            .margin(8)
            .x_label_area_size(42)
            .y_label_area_size(86)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(drawing)?;
        chart
            .configure_mesh()
            .x_desc(&plot.x_label)
            .y_desc(&panel.y_label)
            .apply(house_style)
            .draw()
            .map_err(drawing)?;
        for (i, series) in panel.series.iter().enumerate() {
            let c = color(i);
            let line = series.reduced.line();
            if line.len() < 2 {
                chart
                    .draw_series(line.iter().map(|&p| Circle::new(p, 3, c.filled())))
                    .map_err(drawing)?;
            }
            let drawn = chart
                .draw_series(LineSeries::new(line, c.stroke_width(1)))
                .map_err(drawing)?;
            if panel.series.len() > 1 {
                drawn
                    .label(&series.label)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c));
            }
        }
        // One line is named by the axis text; a legend would only hide part of it.
        if panel.series.len() > 1 {
            chart
                .configure_series_labels()
                .label_font((FAMILY, 12).into_font())
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(160, 160, 160))
                .position(SeriesLabelPosition::UpperRight)
                .draw()
                .map_err(drawing)?;
        }
    }
    Ok(())
}

/// Time bins of the overview's lanes.
const OVERVIEW_BINS: usize = 300;

fn overview<DB: DrawingBackend>(o: &Overview, root: &DrawingArea<DB, Shift>) -> Result<()> {
    let mut title = format!("{}: {} streams, {}", o.title, o.lanes.len(), o.integrity);
    if o.lost.0 > 0 {
        title.push_str(&format!(", {} bytes lost", o.lost.0));
    }
    let root = root
        .titled(&title, (FAMILY, 20).into_font())
        .map_err(drawing)?;
    let bounds: Vec<_> = o.lanes.iter().filter_map(|l| l.times.bounds()).collect();
    let x0 = bounds.iter().map(|b| b.0.0).fold(f64::INFINITY, f64::min);
    let x1 = bounds
        .iter()
        .map(|b| b.0.1)
        .fold(f64::NEG_INFINITY, f64::max);
    let (t0, t1) = (x0, x1);
    let bin = if t1 > t0 {
        (t1 - t0) / OVERVIEW_BINS as f64
    } else {
        1.0
    };
    let (x0, x1) = axis("row times", x0, x1)?;
    let n = o.lanes.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .margin(10)
        .x_label_area_size(42)
        .y_label_area_size(8)
        .build_cartesian_2d(x0..x1, 0f64..n)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc(&o.x_label)
        .apply(house_style)
        .draw()
        .map_err(drawing)?;
    let label_font = (FAMILY, 13).into_font();
    for (i, lane) in o.lanes.iter().enumerate() {
        let base = n - 1.0 - i as f64;
        let lane_color = i;
        // Rows per bin of the whole time axis, so every lane has the same resolution and a
        // bin is empty only where the stream really paused.
        let mut counts = vec![0u64; OVERVIEW_BINS];
        for (_, b) in lane.times.buckets() {
            let i = ((b.first.0 - t0) / bin).floor().max(0.0) as usize;
            counts[i.min(OVERVIEW_BINS - 1)] += b.count;
        }
        let peak = counts.iter().copied().max().unwrap_or(0) as f64;
        if peak > 0.0 {
            chart
                .draw_series(
                    counts
                        .iter()
                        .enumerate()
                        .filter(|(_, c)| **c > 0)
                        .map(|(i, &c)| {
                            let start = t0 + i as f64 * bin;
                            let h = 0.05 + 0.55 * c as f64 / peak;
                            Rectangle::new(
                                [(start, base + 0.05), (start + bin, base + h)],
                                color(lane_color).filled(),
                            )
                        }),
                )
                .map_err(drawing)?;
        }
        let width = bin;
        let mut text = format!("{}: {} rows", lane.name, lane.rows);
        if let Some(rate) = lane.mean_rate() {
            text.push_str(&format!(", {rate:.3} Hz"));
            if let Some((a, b)) = lane.longest_gap()
                && b - a > 5.0 / rate
                && b - a > 2.0 * width
            {
                text.push_str(&format!(", longest gap {:.3} s from {a:.3} s", b - a));
            }
        }
        chart
            .draw_series(std::iter::once(Text::new(
                text,
                (x0, base + 0.95),
                label_font.clone(),
            )))
            .map_err(drawing)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x0, base), (x1, base)],
                RGBColor(200, 200, 200),
            )))
            .map_err(drawing)?;
    }
    if let Some((at, Some(t))) = o.truncated {
        let red = RGBColor(200, 0, 0);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(t, 0.0), (t, n)],
                red.stroke_width(2),
            )))
            .map_err(drawing)?;
        let anchor = if t > (x0 + x1) / 2.0 {
            Pos::new(HPos::Right, VPos::Top)
        } else {
            Pos::new(HPos::Left, VPos::Top)
        };
        chart
            .draw_series(std::iter::once(Text::new(
                format!("file ends: truncated at byte {at}"),
                (t, n * 0.5),
                (FAMILY, 13).into_font().color(&red).pos(anchor),
            )))
            .map_err(drawing)?;
    }
    Ok(())
}

fn map<DB: DrawingBackend>(m: &TrackMap, root: &DrawingArea<DB, Shift>) -> Result<()> {
    let root = root
        .titled(&m.title, (FAMILY, 20).into_font())
        .map_err(drawing)?;
    let (top, bottom) = if m.profile {
        let (_, h) = root.dim_in_pixel();
        let (a, b) = root.split_vertically(h * 62 / 100);
        (a, Some(b))
    } else {
        (root.clone(), None)
    };
    let points = || m.tracks.iter().flat_map(|t| &t.points);
    let fold = |f: fn(&crate::tracks::TrackPoint) -> f64| {
        points()
            .map(f)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            })
    };
    let (mut x0, mut x1) = axis(&m.x_label, fold(|p| p.1).0, fold(|p| p.1).1)?;
    let (mut y0, mut y1) = axis(&m.y_label, fold(|p| p.2).0, fold(|p| p.2).1)?;
    // One unit across as long as one unit up (for longitude, one degree is shorter by the
    // cosine of the latitude).
    let (w, h) = top.dim_in_pixel();
    let (pw, ph) = (
        f64::from(w.saturating_sub(110).max(10)),
        f64::from(h.saturating_sub(80).max(10)),
    );
    let stretch = if m.geographic {
        ((y0 + y1) / 2.0).to_radians().cos().abs().max(0.05)
    } else {
        1.0
    };
    let (dx, dy) = ((x1 - x0) * stretch, y1 - y0);
    // Grown only while the axis stays finite: a map wider than a double spans keeps its
    // aspect unequal instead.
    if dx / dy > pw / ph {
        let grow = (dx * ph / pw - dy) / 2.0;
        if drawable(y0 - grow, y1 + grow) {
            (y0, y1) = (y0 - grow, y1 + grow);
        }
    } else {
        let grow = (dy * pw / ph - dx) / 2.0 / stretch;
        if drawable(x0 - grow, x1 + grow) {
            (x0, x1) = (x0 - grow, x1 + grow);
        }
    }
    let mut chart = ChartBuilder::on(&top)
        .margin(10)
        .x_label_area_size(42)
        .y_label_area_size(80)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .x_desc(&m.x_label)
        .y_desc(&m.y_label)
        .apply(house_style)
        .draw()
        .map_err(drawing)?;
    let legend = m.tracks.len() <= 24;
    for (i, track) in m.tracks.iter().enumerate() {
        let c = color(i);
        let xy: Vec<(f64, f64)> = track.points.iter().map(|p| (p.1, p.2)).collect();
        let drawn = chart
            .draw_series(LineSeries::new(xy.iter().copied(), c.stroke_width(2)))
            .map_err(drawing)?;
        if legend {
            drawn.label(&track.name).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
            });
        }
        // Where the track starts.
        chart
            .draw_series(xy.first().map(|&p| Circle::new(p, 4, c.filled())))
            .map_err(drawing)?;
    }
    if legend && !m.tracks.is_empty() {
        chart
            .configure_series_labels()
            .label_font((FAMILY, 12).into_font())
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(160, 160, 160))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(drawing)?;
    }
    let Some(bottom) = bottom else {
        return Ok(());
    };
    let alt = || points().filter_map(|p| p.3);
    let (a0, a1) = axis(
        &m.altitude_label,
        alt().fold(f64::INFINITY, f64::min),
        alt().fold(f64::NEG_INFINITY, f64::max),
    )?;
    let (t0, t1) = axis("times", fold(|p| p.0).0, fold(|p| p.0).1)?;
    let mut chart = ChartBuilder::on(&bottom)
        .caption("altitude profile", (FAMILY, 15).into_font())
        .margin(10)
        .x_label_area_size(42)
        .y_label_area_size(80)
        .build_cartesian_2d(t0..t1, a0..a1)
        .map_err(drawing)?;
    chart
        .configure_mesh()
        .x_desc("time [s]")
        .y_desc(&m.altitude_label)
        .apply(house_style)
        .draw()
        .map_err(drawing)?;
    for (i, track) in m.tracks.iter().enumerate() {
        let line = track.points.iter().filter_map(|p| p.3.map(|a| (p.0, a)));
        chart
            .draw_series(LineSeries::new(line, color(i).stroke_width(2)))
            .map_err(drawing)?;
    }
    Ok(())
}

/// The mesh style every chart shares: the embedded font for labels and axis names, light grey
/// grid lines.
fn house_style<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged,
    Y: Ranged,
    DB: DrawingBackend,
{
    mesh.label_style((FAMILY, 12).into_font())
        .axis_desc_style((FAMILY, 14).into_font())
        .bold_line_style(RGBColor(225, 225, 225))
        .light_line_style(RGBColor(245, 245, 245))
}

/// Lets a chart's mesh builder take a shared style in the middle of its chain.
trait Apply: Sized {
    fn apply(&mut self, style: impl FnOnce(&mut Self) -> &mut Self) -> &mut Self {
        style(self)
    }
}

impl<X: Ranged, Y: Ranged, DB: DrawingBackend> Apply for MeshStyle<'_, '_, X, Y, DB> {}
