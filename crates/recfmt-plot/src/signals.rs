//! Chosen signals against time.

use std::collections::BTreeMap;

use recfmt_core::{BatchSet, RecordingReader, Shape};
use recfmt_select::{Pattern, Pipeline, SelectedReader, Selection, TimeRange};

use crate::{Error, Reducer, Result, element_f64, for_each_batch};

/// How series are grouped into panels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Panels {
    /// One panel per unit: signals in metres share one, those in seconds another.
    #[default]
    Unit,
    /// One panel per stream.
    Stream,
}

/// What to plot.
#[derive(Debug, Clone, Default)]
pub struct SignalOptions {
    /// Signals to plot (`name` or `stream.name`, globs, `re:` regexes, as convert's
    /// `--signal`); empty: every numeric signal.
    pub signals: Vec<Pattern>,
    /// Rows kept.
    pub range: TimeRange,
    /// Panel grouping.
    pub panels: Panels,
    /// The figure's title (usually [`crate::title_for`]).
    pub title: String,
}

/// Series of an entity-keyed stream (one row per actor per tick) beyond this many entities
/// per signal are left out of a plot (and counted in [`SignalPlot::notes`]).
pub const MAX_ENTITIES: usize = 16;

/// Fixed-shape signals with more elements than this are left out (one line per element
/// would be unreadable).
pub const MAX_ELEMENTS: usize = 16;

/// Lines drawn at most: each keeps [`Reducer::BUCKETS`] buckets (about 300 KB), and more
/// lines than this are unreadable anyway (and counted in [`SignalPlot::notes`]).
pub const MAX_SERIES: usize = 64;

/// One line of a plot.
#[derive(Debug, Clone)]
pub struct Series {
    /// `stream.signal`, with `[i]` for an array element and ` (id N)` for an entity.
    pub label: String,
    /// The signal's unit.
    pub unit: Option<String>,
    /// The reduced points.
    pub reduced: Reducer,
}

/// One panel: series sharing a y axis.
#[derive(Debug, Clone)]
pub struct Panel {
    /// The panel's caption (the unit or the stream).
    pub caption: String,
    /// The y axis text: signal names and unit.
    pub y_label: String,
    /// The lines.
    pub series: Vec<Series>,
}

/// Signals against time, reduced and grouped, ready to draw.
#[derive(Debug, Clone)]
pub struct SignalPlot {
    /// The title.
    pub title: String,
    /// The x axis text.
    pub x_label: String,
    /// The panels, top to bottom.
    pub panels: Vec<Panel>,
    /// The time range asked for, when one was (the x axis spans it).
    pub range: Option<(f64, f64)>,
    /// What was left out and why.
    pub notes: Vec<String>,
    /// What the reader lost (a truncated file's plot ends where the file does).
    pub integrity: recfmt_core::Integrity,
}

/// Which series a column element of one row feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct SeriesKey {
    stream: usize,
    signal: usize,
    element: usize,
    entity: Option<i128>,
}

/// Reads the chosen signals (batch by batch, through a [`SelectedReader`]) and reduces each
/// to min/max buckets.
pub fn plot_signals(
    reader: Box<dyn RecordingReader>,
    options: &SignalOptions,
) -> Result<crate::Figure> {
    let pipeline = Pipeline {
        selection: Selection {
            signals: options.signals.clone(),
            ..Selection::default()
        },
        range: options.range.clone(),
        ..Pipeline::default()
    };
    let mut reader = SelectedReader::new(reader, &pipeline)?;
    let schema = reader.schema().clone();
    let header = reader.header().clone();
    let mut notes = Vec::new();

    // The columns to read: numeric signals that are neither time nor entity key.
    let mut plotted: Vec<Vec<(usize, usize)>> = Vec::new(); // per stream: (signal, elements)
    let mut variable: Vec<String> = Vec::new();
    let mut too_wide: Vec<(String, usize)> = Vec::new();
    for desc in &schema.streams {
        let mut columns = Vec::new();
        for (i, sig) in desc.signals.iter().enumerate() {
            if i == desc.time || Some(i) == desc.entity {
                continue;
            }
            if matches!(
                sig.dtype,
                recfmt_core::DType::Str | recfmt_core::DType::Bytes
            ) {
                continue;
            }
            match (&sig.shape, sig.shape.element_count()) {
                (Shape::Variable, _) | (_, None) => {
                    variable.push(format!("{}.{}", desc.name, sig.name));
                }
                (_, Some(n)) if n > MAX_ELEMENTS => {
                    too_wide.push((format!("{}.{}", desc.name, sig.name), n));
                }
                (_, Some(n)) => columns.push((i, n)),
            }
        }
        plotted.push(columns);
    }
    if !variable.is_empty() {
        notes.push(summary(
            &variable,
            "a variable-length list has no line to draw",
        ));
    }
    match too_wide.as_slice() {
        [] => {}
        [(name, n)] => notes.push(format!(
            "{name}: {n} elements per row, more than {MAX_ELEMENTS} lines; choose one stream of a smaller signal"
        )),
        many => {
            let names: Vec<String> = many.iter().map(|(name, _)| name.clone()).collect();
            notes.push(summary(
                &names,
                &format!("more than {MAX_ELEMENTS} elements per row, more than {MAX_ELEMENTS} lines each; choose one stream of a smaller signal"),
            ));
        }
    }
    if plotted.iter().all(Vec::is_empty) {
        return Err(Error::Invalid(
            "no numeric signal matches; `recfmt info` lists the signals".into(),
        ));
    }

    let batches = BatchSet::with_columns(
        &schema,
        65_536,
        |s| !plotted[s].is_empty(),
        |s, c| {
            let desc = &schema.streams[s];
            c == desc.time || Some(c) == desc.entity || plotted[s].iter().any(|&(i, _)| i == c)
        },
    );
    let mut series: BTreeMap<SeriesKey, Reducer> = BTreeMap::new();
    let mut entities: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let mut dropped_entities: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    let mut dropped_series: BTreeMap<(usize, usize), u64> = BTreeMap::new();
    for_each_batch(&mut reader, batches, &mut |batch| {
        let s = batch.stream();
        let desc = &schema.streams[s];
        let times = batch.times(desc);
        let columns = batch.columns();
        let entity_of = |row: usize| -> Option<i128> {
            let e = columns.get(desc.entity?)?;
            element_f64(e.data(), row).map(|v| v as i128)
        };
        for &(signal, width) in &plotted[s] {
            let column = &columns[signal];
            let valid = column.validity();
            for (row, t) in times.iter().enumerate() {
                let Some(t) = *t else { continue };
                if valid.is_some_and(|v| !v.get(row).copied().unwrap_or(false)) {
                    continue;
                }
                let entity = entity_of(row);
                for element in 0..width {
                    let Some(v) = element_f64(column.data(), row * width + element) else {
                        continue;
                    };
                    let key = SeriesKey {
                        stream: s,
                        signal,
                        element,
                        entity,
                    };
                    if let Some(r) = series.get_mut(&key) {
                        r.push(t, v);
                        continue;
                    }
                    if series.len() >= MAX_SERIES {
                        *dropped_series.entry((s, signal)).or_default() += 1;
                        continue;
                    }
                    let seen = entities.entry((s, signal)).or_default();
                    if entity.is_some() && *seen >= MAX_ENTITIES * width {
                        *dropped_entities.entry((s, signal)).or_default() += 1;
                        continue;
                    }
                    *seen += 1;
                    series.entry(key).or_default().push(t, v);
                }
            }
        }
        Ok(())
    })?;
    let name_of = |&(s, signal): &(usize, usize)| {
        let desc = &schema.streams[s];
        format!("{}.{}", desc.name, desc.signals[signal].name)
    };
    if !dropped_entities.is_empty() {
        let names: Vec<String> = dropped_entities.keys().map(name_of).collect();
        let rows: u64 = dropped_entities.values().sum();
        notes.push(summary(
            &names,
            &format!("only the first {MAX_ENTITIES} entities are drawn ({rows} values of others left out); choose fewer with --signal"),
        ));
    }
    if !dropped_series.is_empty() {
        let names: Vec<String> = dropped_series.keys().map(name_of).collect();
        let values: u64 = dropped_series.values().sum();
        notes.push(summary(
            &names,
            &format!("not drawn, more than {MAX_SERIES} lines already ({values} values left out); choose fewer with --signal"),
        ));
    }

    // Group into panels, in the order the signals come.
    let mut panels: Vec<Panel> = Vec::new();
    for (key, reduced) in series {
        if reduced.points() == 0 {
            continue;
        }
        let desc = &schema.streams[key.stream];
        let sig = &desc.signals[key.signal];
        let mut label = format!("{}.{}", desc.name, sig.name);
        if sig.shape != Shape::Scalar {
            label.push_str(&format!("[{}]", key.element));
        }
        if let Some(e) = key.entity {
            let name = desc
                .entity
                .map_or("entity", |i| desc.signals[i].name.as_str());
            label.push_str(&format!(" ({name} {e})"));
        }
        let caption = match options.panels {
            Panels::Unit => sig
                .unit
                .as_deref()
                .map_or_else(|| "no unit".to_owned(), |u| format!("unit: {u}")),
            Panels::Stream => desc.name.clone(),
        };
        let panel = match panels.iter().position(|p| p.caption == caption) {
            Some(i) => &mut panels[i],
            None => {
                panels.push(Panel {
                    caption,
                    y_label: String::new(),
                    series: Vec::new(),
                });
                panels
                    .last_mut()
                    .ok_or_else(|| Error::Invalid("no panel".into()))?
            }
        };
        panel.series.push(Series {
            label,
            unit: sig.unit.clone(),
            reduced,
        });
    }
    if panels.is_empty() {
        return Err(Error::Invalid(
            "the chosen signals hold no finite value in the chosen time range".into(),
        ));
    }
    // A panel per unit can hold signals of several streams, so its axis names each by
    // `stream.signal`; a panel per stream is captioned with the stream.
    let qualified = options.panels == Panels::Unit;
    for panel in &mut panels {
        panel.y_label = y_label(&panel.series, qualified);
    }
    let x_label = match header.time.and_then(|t| t.to_rfc3339(0.0)) {
        Some(epoch) => format!("time [s] since {epoch}"),
        None => "time [s]".to_owned(),
    };
    let range = reader
        .resolved_range()
        .filter(|_| !options.range.is_empty());
    Ok(crate::Figure::Signals(SignalPlot {
        title: options.title.clone(),
        x_label,
        panels,
        range,
        notes,
        integrity: reader.integrity().clone(),
    }))
}

/// Signals named in one note at most; a note lists the first ones and counts the rest.
const NAMED_IN_A_NOTE: usize = 5;

/// One note for every signal left out for one reason: `a.x, b.y: why`, or with many signals
/// `a.x, b.y, … and 9995 more: why` (a line per signal would bury every other message).
fn summary(names: &[String], why: &str) -> String {
    if names.len() <= NAMED_IN_A_NOTE {
        return format!("{}: {why}", names.join(", "));
    }
    format!(
        "{} and {} more: {why}",
        names[..NAMED_IN_A_NOTE].join(", "),
        names.len() - NAMED_IN_A_NOTE
    )
}

/// `name [unit]` for one signal, `a, b [unit]` for several of one unit, names and units
/// otherwise; long lists are cut with `…`. Names are `stream.signal` when `qualified`, else
/// the signal's own name.
fn y_label(series: &[Series], qualified: bool) -> String {
    let mut names: Vec<String> = Vec::new();
    for s in series {
        let name = match s.label.split_once('.') {
            Some((_, short)) if !qualified => short,
            _ => s.label.as_str(),
        };
        let name = name.split(" (").next().unwrap_or(name).to_owned();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let units: Vec<&str> = {
        let mut u: Vec<&str> = series.iter().filter_map(|s| s.unit.as_deref()).collect();
        u.dedup();
        u
    };
    let mut text = if names.len() > 3 {
        format!("{}, … ({} signals)", names[..2].join(", "), names.len())
    } else {
        names.join(", ")
    };
    if units.len() == 1 {
        text.push_str(&format!(" [{}]", units[0]));
    }
    text
}
