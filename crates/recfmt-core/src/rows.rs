//! One decode path for every reader: the [`RowWriter`] a reader's `read_row` writes to.

use crate::batch::{ColumnBuf, StreamBatch};
use crate::{ArrayValue, BatchSet, Error, FrameBuf, NativeElement, Result, Schema, Value};

/// Where the rows go.
enum Target<'a> {
    /// One row, as values (the row path).
    Frame(&'a mut FrameBuf),
    /// Typed columns, many rows.
    Batches(&'a mut BatchSet),
}

/// The state of the row being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// No row begun, or the last one finished.
    Idle,
    /// A row of a wanted stream is being written.
    Writing,
    /// The reader was told to skip the row's values ([`RowWriter::begin`] returned false).
    Skipping,
}

/// Where a reader puts the rows it decodes, so one decode path serves both views: each row
/// goes either into a [`FrameBuf`] (the row path, [`RecordingReader::read_frame`]) or straight
/// into the typed columns of a [`BatchSet`] (the batch path, [`RecordingReader::read_batches`]).
///
/// A reader that implements only [`RecordingReader::read_row`] gets both views of its data
/// from the same code, and the batch view costs no [`Value`] per value: a number pushed with
/// [`RowWriter::push`] lands in its column's `Vec` when its type is the column's type, and
/// goes through the row path's exact conversions otherwise (an integer that does not fit, or
/// a float pushed into an integer column, is an error naming the stream and the signal, never
/// a dropped value).
///
/// ```
/// use recfmt_core::{
///     BatchSet, DType, FormatInfo, Header, Integrity, RecordingReader, Result, RowWriter,
///     Schema, SignalDesc, StreamDesc, TimeBase,
/// };
///
/// /// Pings of one beacon, made up on the fly.
/// struct Pings { schema: Schema, header: Header, integrity: Integrity, next: u32 }
///
/// static INFO: FormatInfo = FormatInfo { id: "pings", name: "Pings", extensions: &[] };
///
/// impl RecordingReader for Pings {
///     fn format(&self) -> &'static FormatInfo { &INFO }
///     fn header(&self) -> &Header { &self.header }
///     fn schema(&self) -> &Schema { &self.schema }
///     fn integrity(&self) -> &Integrity { &self.integrity }
///     fn read_row(&mut self, row: &mut RowWriter<'_>) -> Result<bool> {
///         if self.next == 1000 {
///             return Ok(false);
///         }
///         self.next += 1;
///         if row.begin(0)? {
///             row.push(f64::from(self.next) * 0.1)?; // t
///             row.push(-60.0f32)?; // rssi
///             row.finish()?;
///         }
///         Ok(true)
///     }
/// }
///
/// let mut stream = StreamDesc::new("pings", SignalDesc::scalar("t", DType::F64), TimeBase::SECONDS);
/// stream.signals.push(SignalDesc::scalar("rssi", DType::F32));
/// let schema = Schema { streams: vec![stream] };
/// let mut reader = Pings { schema: schema.clone(), header: Header::default(), integrity: Integrity::default(), next: 0 };
///
/// let mut batches = BatchSet::new(&schema, 600);
/// assert!(reader.read_batches(&mut batches)?); // a full batch of 600 rows
/// assert_eq!(batches.take(0).rows(), 600);
/// assert!(!reader.read_batches(&mut batches)?); // the rest, then the end
/// assert_eq!(batches.stream(0).rows(), 400);
/// # Ok::<(), recfmt_core::Error>(())
/// ```
///
/// [`RecordingReader::read_row`]: crate::RecordingReader::read_row
/// [`RecordingReader::read_frame`]: crate::RecordingReader::read_frame
/// [`RecordingReader::read_batches`]: crate::RecordingReader::read_batches
///
/// A row is [`RowWriter::begin`], one push per signal of the stream (time column included,
/// in schema order), then [`RowWriter::finish`]. When `begin` returns `false` the stream is
/// not wanted: the reader skips the row's values and calls nothing else for it.
pub struct RowWriter<'a> {
    target: Target<'a>,
    state: State,
    stream: usize,
    /// The signal the next push is for.
    signal: usize,
    /// Rows the values being pushed are for: 1, or a run's length
    /// ([`RowWriter::begin_rows`]).
    run: usize,
    /// Rows finished by this writer.
    rows: usize,
    /// Set by the default `read_frame`, which asks `read_row`: a reader that implements
    /// neither would otherwise recurse forever.
    from_default_frame: bool,
    /// Some stream's batch is full.
    filled: bool,
    /// Rows were appended through [`RowWriter::batch_set_mut`]: whether a batch is full is
    /// asked of the batches themselves.
    appended: bool,
    /// The row the default `read_row` (through `read_frame`) reuses.
    scratch: FrameBuf,
    /// Per stream, the row count its batch must reach before it can hold
    /// [`BatchSet::MAX_BATCH_BYTES`]: `finish` sums the column bytes only then (for a stream
    /// of fixed-width columns the bytes per row are exact, so the next check is many rows
    /// away; otherwise it is the next row).
    byte_checks: Vec<usize>,
}

impl Drop for RowWriter<'_> {
    fn drop(&mut self) {
        if let Target::Batches(set) = &mut self.target {
            set.scratch = std::mem::take(&mut self.scratch);
        }
    }
}

impl<'a> RowWriter<'a> {
    /// A writer that puts the next row into `frame`.
    pub fn frame(frame: &'a mut FrameBuf) -> Self {
        Self::new(Target::Frame(frame))
    }

    /// A writer that appends rows to the batches of `batches` (rows of streams it does not
    /// want are skipped).
    pub fn batches(batches: &'a mut BatchSet) -> Self {
        let scratch = std::mem::take(&mut batches.scratch);
        let mut writer = Self::new(Target::Batches(batches));
        writer.scratch = scratch;
        writer
    }

    fn new(target: Target<'a>) -> Self {
        RowWriter {
            target,
            state: State::Idle,
            stream: 0,
            signal: 0,
            run: 1,
            rows: 0,
            from_default_frame: false,
            filled: false,
            appended: false,
            scratch: FrameBuf::default(),
            byte_checks: Vec::new(),
        }
    }

    pub(crate) fn for_default_frame(frame: &'a mut FrameBuf) -> Self {
        let mut writer = Self::frame(frame);
        writer.from_default_frame = true;
        writer
    }

    /// Rows finished so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Starts a row of stream `stream` (its index in the schema). Returns `false` when the
    /// stream is not wanted: skip the row's values, push nothing and do not call `finish`.
    #[inline]
    pub fn begin(&mut self, stream: usize) -> Result<bool> {
        if self.state == State::Writing {
            return Err(Error::invalid(format!(
                "a row of stream {stream} was begun before the row of stream {} was finished",
                self.stream
            )));
        }
        self.stream = stream;
        self.signal = 0;
        self.run = 1;
        match &mut self.target {
            Target::Frame(frame) => {
                frame.stream = stream;
                self.state = State::Writing;
                Ok(true)
            }
            Target::Batches(set) => {
                if stream >= set.len() {
                    return Err(Error::invalid(format!(
                        "the reader wrote a row of stream {stream}, but the schema has {} streams",
                        set.len()
                    )));
                }
                if set.wants(stream) {
                    self.state = State::Writing;
                    Ok(true)
                } else {
                    self.state = State::Skipping;
                    Ok(false)
                }
            }
        }
    }

    /// Starts a run of up to `rows` rows of stream `stream` that a reader of fixed-size
    /// records writes column by column: [`RowWriter::push_column`] (or
    /// [`RowWriter::skip`]) once per signal, then [`RowWriter::finish`]. Returns how many rows
    /// the run holds: 0 when the stream is not wanted (push nothing and do not call
    /// `finish`), 1 on the row path (one row per call), on the batch path as many as the
    /// stream's batch takes before it is full. The values are the same as row by row.
    pub fn begin_rows(&mut self, stream: usize, rows: usize) -> Result<usize> {
        if rows == 0 {
            return Ok(0);
        }
        if !self.begin(stream)? {
            return Ok(0);
        }
        self.run = match &self.target {
            Target::Frame(_) => 1,
            Target::Batches(set) => {
                let capacity = set.capacity();
                set.stream(stream).room(capacity).clamp(1, rows)
            }
        };
        Ok(self.run)
    }

    /// Appends the next signal's values for the rows of a run ([`RowWriter::begin_rows`]):
    /// exactly as many as the run holds, converted as [`RowWriter::push`] converts.
    #[inline]
    pub fn push_column<T: RowElement>(
        &mut self,
        values: impl IntoIterator<Item = T>,
    ) -> Result<()> {
        let signal = self.next_signal()?;
        let (stream, run) = (self.stream, self.run);
        let mut values = values.into_iter().take(run);
        let taken = match &mut self.target {
            Target::Frame(frame) => match values.next() {
                Some(value) => {
                    put_frame_value(frame, signal, value.into_value());
                    1
                }
                None => 0,
            },
            Target::Batches(set) => {
                let batch = set.stream_mut(stream);
                let rows = batch.rows();
                let column = column_at(batch.columns_mut(), signal, stream)?;
                column
                    .extend_native(values, rows)
                    .map_err(|message| value_error(stream, signal, message))?
            }
        };
        if taken != run {
            return Err(value_error(
                stream,
                signal,
                format!("the run has {run} rows but {taken} values were pushed"),
            ));
        }
        Ok(())
    }

    /// Appends the next signal's values for the rows of a run ([`RowWriter::begin_rows`])
    /// when the signal is a fixed-shape array of `width` elements: `width` elements per row,
    /// row after row (exactly `width` times the rows the run holds), converted as
    /// [`RowWriter::push_slice`] converts.
    #[inline]
    pub fn push_array_column<T: RowElement>(
        &mut self,
        values: impl IntoIterator<Item = T>,
        width: usize,
    ) -> Result<()> {
        let signal = self.next_signal()?;
        let (stream, run) = (self.stream, self.run);
        let mut values = values.into_iter().take(run.saturating_mul(width));
        let taken = match &mut self.target {
            Target::Frame(frame) => {
                let items: Vec<T> = values.by_ref().take(width).collect();
                if items.len() == width {
                    put_frame_value(frame, signal, Value::Array(T::array(&items)));
                    1
                } else {
                    0
                }
            }
            Target::Batches(set) => {
                let batch = set.stream_mut(stream);
                let rows = batch.rows();
                let column = column_at(batch.columns_mut(), signal, stream)?;
                column
                    .extend_fixed_native(values, width, rows)
                    .map_err(|message| value_error(stream, signal, message))?
            }
        };
        if taken != run {
            return Err(value_error(
                stream,
                signal,
                format!("the run has {run} rows but {taken} rows of {width} elements were pushed"),
            ));
        }
        Ok(())
    }

    /// Appends the next signal's value: any number type or `bool`. Stored as is when it is
    /// the column's type; otherwise converted exactly as the row path converts (an integer
    /// must fit, a float is refused by an integer column), or refused with an error.
    #[inline(always)]
    pub fn push<T: RowElement>(&mut self, value: T) -> Result<()> {
        // The common case inline: one value of the column's type, on the batch path.
        if self.run == 1
            && self.state == State::Writing
            && let Target::Batches(set) = &mut self.target
            && let Some(column) = set.column_mut(self.stream, self.signal)
            && column.push_same_type(value)
        {
            self.signal += 1;
            return Ok(());
        }
        self.push_general(value)
    }

    /// [`RowWriter::push`] on the row path, with a conversion, or failing.
    fn push_general<T: RowElement>(&mut self, value: T) -> Result<()> {
        self.check_single_row()?;
        let signal = self.next_signal()?;
        match &mut self.target {
            Target::Frame(frame) => {
                put_frame_value(frame, signal, value.into_value());
                Ok(())
            }
            Target::Batches(set) => {
                let batch = set.stream_mut(self.stream);
                let rows = batch.rows();
                let column = column_at(batch.columns_mut(), signal, self.stream)?;
                let stream = self.stream;
                column
                    .push_native(value, rows)
                    .map_err(|message| value_error(stream, signal, message))
            }
        }
    }

    /// True when the next signal's value is kept. False only on the batch path when a column
    /// projection ([`BatchSet::with_columns`]) left the signal's column out: a reader may then
    /// skip decoding the value and call [`RowWriter::skip`] (pushing it anyway is also fine).
    #[inline]
    pub fn wants_next(&self) -> bool {
        match &self.target {
            Target::Frame(_) => true,
            Target::Batches(set) => set
                .stream(self.stream)
                .columns()
                .get(self.signal)
                .is_none_or(|column| !column.is_skipped()),
        }
    }

    /// Moves past the next signal without decoding its value: only for a signal whose column
    /// [`RowWriter::wants_next`] said is left out. On the row path every value is needed, so
    /// this is an error there.
    #[inline]
    pub fn skip(&mut self) -> Result<()> {
        if self.wants_next() {
            let (stream, signal) = (self.stream, self.signal);
            return Err(value_error(
                stream,
                signal,
                "the reader skipped a value that is wanted (see RowWriter::wants_next)".into(),
            ));
        }
        self.next_signal().map(|_| ())
    }

    /// True when the next signal or any after it in the row is kept: false only on the batch
    /// path when a projection left out every column from the next one on (`validate` keeps
    /// only the time), so a reader may then skip them all with one
    /// [`RowWriter::skip_rest`] instead of a [`RowWriter::skip`] per value.
    #[inline]
    pub fn wants_rest(&self) -> bool {
        match &self.target {
            Target::Frame(_) => true,
            Target::Batches(set) => set
                .stream(self.stream)
                .columns()
                .get(self.signal..)
                .is_some_and(|rest| rest.iter().any(|column| !column.is_skipped())),
        }
    }

    /// Moves past every signal left in the row when none of them is kept (a projection of
    /// the times alone, as `recfmt validate` reads): true then, and the reader need not look
    /// at those values at all; false, changing nothing, when one of them is wanted.
    #[inline]
    pub fn skip_rest(&mut self) -> bool {
        let Target::Batches(set) = &self.target else {
            return false;
        };
        if self.state != State::Writing {
            return false;
        }
        let columns = set.stream(self.stream).columns();
        let rest = columns.get(self.signal..).unwrap_or_default();
        if rest.iter().all(ColumnBuf::is_skipped) {
            self.signal = columns.len();
            true
        } else {
            false
        }
    }

    /// True when the reader may write another row in the same `read_row` call: on the batch
    /// path while no batch is full, so a reader can decode a run of records in one call
    /// (less per-call work); never on the row path, which takes one row per call.
    #[inline]
    pub fn has_room(&self) -> bool {
        matches!(self.target, Target::Batches(_)) && !self.filled_a_batch()
    }

    /// Appends the next signal's value as an array (fixed or variable shape), already in the
    /// column's element type.
    pub fn push_slice<T: RowElement>(&mut self, items: &[T]) -> Result<()> {
        self.push_with(
            |slot| *slot = Value::Array(T::array(items)),
            |column, _| column.push_slice(items),
        )
    }

    /// Appends the next signal's value as text.
    pub fn push_str(&mut self, text: &str) -> Result<()> {
        self.push_with(|slot| slot.set_str(text), |column, _| column.push_str(text))
    }

    /// Appends the next signal's value as opaque bytes.
    pub fn push_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        self.push_with(
            |slot| slot.set_bytes(bytes),
            |column, _| column.push_bytes(bytes),
        )
    }

    /// Appends no value for the next signal (not sampled in this row).
    pub fn push_null(&mut self) -> Result<()> {
        self.push_value(&Value::Null)
    }

    /// Appends the next signal's value given as a [`Value`] (the slow, general path).
    pub fn push_value(&mut self, value: &Value) -> Result<()> {
        self.push_with(
            |slot| *slot = value.clone(),
            |column, rows| column.push_value(value, rows),
        )
    }

    /// Appends the next signal's value: `frame` sets the row path's value slot, `column`
    /// appends to the signal's column (given the rows the batch holds before this one).
    fn push_with(
        &mut self,
        frame: impl FnOnce(&mut Value),
        column: impl FnOnce(&mut ColumnBuf, usize) -> std::result::Result<(), String>,
    ) -> Result<()> {
        self.check_single_row()?;
        let signal = self.next_signal()?;
        let stream = self.stream;
        match &mut self.target {
            Target::Frame(row) => {
                frame(frame_slot(row, signal));
                Ok(())
            }
            Target::Batches(set) => {
                let batch = set.stream_mut(stream);
                let rows = batch.rows();
                let buf = column_at(batch.columns_mut(), signal, stream)?;
                column(buf, rows).map_err(|message| value_error(stream, signal, message))
            }
        }
    }

    /// Ends the row: every signal of the stream must have had its value.
    #[inline(always)]
    pub fn finish(&mut self) -> Result<()> {
        // The common case inline: a whole row on the batch path.
        if self.state == State::Writing
            && let Target::Batches(set) = &mut self.target
        {
            let capacity = set.capacity();
            let batch = set.stream_mut(self.stream);
            if self.signal == batch.columns().len() {
                batch.commit_pushed_rows(self.run);
                let rows = batch.rows();
                if rows >= capacity {
                    self.filled = true;
                } else if rows >= self.byte_checks.get(self.stream).copied().unwrap_or(0) {
                    self.measure_bytes();
                }
                self.state = State::Idle;
                self.rows += self.run;
                return Ok(());
            }
        }
        self.finish_general()
    }

    /// After a row that may have brought its stream's batch to the byte bound: measures,
    /// and sets when to measure next.
    #[inline(never)]
    fn measure_bytes(&mut self) {
        let Target::Batches(set) = &mut self.target else {
            return;
        };
        let stream = self.stream;
        if self.byte_checks.len() <= stream {
            self.byte_checks.resize(stream + 1, 0);
        }
        match next_byte_check(set.stream(stream)) {
            Some(next) => self.byte_checks[stream] = next,
            None => self.filled = true,
        }
    }

    /// [`RowWriter::finish`] on the row path, or failing.
    fn finish_general(&mut self) -> Result<()> {
        if self.state != State::Writing {
            return Err(Error::invalid("a row was finished that was not begun"));
        }
        match &mut self.target {
            Target::Frame(frame) => frame.values.truncate(self.signal),
            Target::Batches(set) => {
                // `finish` took every whole row of the batch path: this one is not whole.
                let signals = set.stream(self.stream).columns().len();
                let message = format!(
                    "the row has {} values but the stream has {signals} signals",
                    self.signal
                );
                return Err(value_error(self.stream, self.signal.min(signals), message));
            }
        }
        self.state = State::Idle;
        self.rows += self.run;
        Ok(())
    }

    /// On the batch path, the batches rows go to (to look at: which streams and columns are
    /// wanted); `None` on the row path.
    pub fn batch_set(&self) -> Option<&BatchSet> {
        match &self.target {
            Target::Batches(set) => Some(set),
            Target::Frame(_) => None,
        }
    }

    /// On the batch path, the batches themselves, for a reader that appends whole runs of
    /// rows it decoded elsewhere instead of pushing them one by one (USVLOG's decoding
    /// threads write each block's rows through a [`RowWriter::batches`] of their own, then
    /// the block's columns are copied here). `None` on the row path, and while a row is being
    /// written. Rows appended here must be whole rows of wanted streams; once a batch is full
    /// ([`BatchSet::is_full`]) the batch call returns to its caller, as after a pushed row.
    pub fn batch_set_mut(&mut self) -> Option<&mut BatchSet> {
        if self.state != State::Idle {
            return None;
        }
        match &mut self.target {
            Target::Batches(set) => {
                self.appended = true;
                Some(set)
            }
            Target::Frame(_) => None,
        }
    }

    /// True once a row filled its stream's batch: the default `read_batches` returns to its
    /// caller then.
    #[inline]
    pub(crate) fn filled_a_batch(&self) -> bool {
        self.filled
            || (self.appended && matches!(&self.target, Target::Batches(set) if set.is_full()))
    }

    /// Takes back the values pushed for a row that was not finished (after an error), so a
    /// batch never holds half a row.
    pub(crate) fn abandon_row(&mut self) {
        if self.state == State::Writing
            && let Target::Batches(set) = &mut self.target
        {
            set.stream_mut(self.stream).drop_unfinished_row();
        }
        self.state = State::Idle;
    }

    /// One value is pushed for one row: not inside a run of several
    /// ([`RowWriter::begin_rows`]), where a column's values come with
    /// [`RowWriter::push_column`].
    #[inline(always)]
    fn check_single_row(&self) -> Result<()> {
        if self.run != 1 {
            return Err(one_value_for_a_run(self.run));
        }
        Ok(())
    }

    /// Index of the signal the next push is for; moves past it.
    #[inline(always)]
    fn next_signal(&mut self) -> Result<usize> {
        if self.state != State::Writing {
            return Err(pushed_out_of_row(self.state));
        }
        let signal = self.signal;
        self.signal += 1;
        Ok(signal)
    }
}

#[cold]
fn one_value_for_a_run(run: usize) -> Error {
    Error::invalid(format!(
        "one value was pushed for a run of {run} rows (push_column pushes a run's values)"
    ))
}

#[cold]
fn pushed_out_of_row(state: State) -> Error {
    Error::invalid(if state == State::Skipping {
        "a value was pushed for a row of a stream that is not wanted (begin returned false)"
    } else {
        "a value was pushed before a row was begun"
    })
}

/// After a row: `None` when `batch` now holds [`BatchSet::MAX_BATCH_BYTES`] (it is full),
/// else the row count at which it must be measured again. Summing the columns' bytes after
/// every row cost a sixth of a times-only scan; a stream whose kept columns all have a fixed
/// width adds the same bytes with every row, so its next measure can wait until the rows
/// could reach the bound.
fn next_byte_check(batch: &StreamBatch) -> Option<usize> {
    let bytes = batch.byte_len();
    if BatchSet::full_at(usize::MAX, batch.rows(), bytes) {
        return None;
    }
    let fixed_width = batch
        .columns()
        .iter()
        .filter(|c| !c.is_skipped())
        .all(|c| c.dtype().size().is_some() && c.width().is_some());
    let row_bytes = batch.fixed_row_bytes();
    let rows_left = if fixed_width && row_bytes > 0 {
        ((BatchSet::MAX_BATCH_BYTES - bytes) / row_bytes).max(1)
    } else {
        1
    };
    Some(batch.rows() + rows_left)
}

/// A value that does not fit signal `signal` of stream `stream`; the names are filled in by
/// [`name_value_error`].
fn value_error(stream: usize, signal: usize, message: String) -> Error {
    Error::Value {
        stream: format!("#{stream}"),
        signal: format!("#{signal}"),
        message,
    }
}

/// The column of signal `signal`, or an error when the stream has fewer signals.
#[inline(always)]
fn column_at(columns: &mut [ColumnBuf], signal: usize, stream: usize) -> Result<&mut ColumnBuf> {
    let count = columns.len();
    columns.get_mut(signal).ok_or_else(|| Error::Value {
        stream: format!("#{stream}"),
        signal: format!("#{signal}"),
        message: format!("the row has more values than the stream's {count} signals"),
    })
}

/// The frame's value slot for `signal`, grown when needed; reused otherwise (so text keeps
/// its allocation).
fn frame_slot(frame: &mut FrameBuf, signal: usize) -> &mut Value {
    if frame.values.len() <= signal {
        frame.values.resize(signal + 1, Value::Null);
    }
    &mut frame.values[signal]
}

fn put_frame_value(frame: &mut FrameBuf, signal: usize, value: Value) {
    *frame_slot(frame, signal) = value;
}

/// Gives the error the names of the stream and signal it is about (the writer knows only
/// indexes).
pub(crate) fn name_value_error(error: Error, schema: &Schema) -> Error {
    let Error::Value {
        stream,
        signal,
        message,
    } = error
    else {
        return error;
    };
    let index = |text: &str| text.strip_prefix('#').and_then(|i| i.parse::<usize>().ok());
    let desc = index(&stream).and_then(|i| schema.streams.get(i));
    let signal_name = desc
        .zip(index(&signal))
        .and_then(|(d, i)| d.signals.get(i))
        .map(|s| s.name.clone());
    Error::Value {
        stream: desc.map_or(stream, |d| d.name.clone()),
        signal: signal_name.unwrap_or(signal),
        message,
    }
}

/// A value a reader can [`RowWriter::push`]: every number type and `bool`.
pub trait RowElement: NativeElement + sealed::Sealed {
    /// As a [`Value`] (numbers widened without loss), for the row path.
    fn into_value(self) -> Value;
    /// Elements as an array value, for [`RowWriter::push_slice`] on the row path.
    #[doc(hidden)]
    fn array(items: &[Self]) -> ArrayValue;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! row_element {
    ($($t:ty => $value:ident($wide:ty), $array:ident;)*) => {$(
        impl sealed::Sealed for $t {}
        impl RowElement for $t {
            #[inline]
            fn into_value(self) -> Value {
                Value::$value(<$wide>::from(self))
            }
            fn array(items: &[Self]) -> ArrayValue {
                ArrayValue::$array(items.iter().map(|&x| x.into()).collect())
            }
        }
    )*};
}
row_element! {
    i8 => Int(i64), Int;
    i16 => Int(i64), Int;
    i32 => Int(i64), Int;
    i64 => Int(i64), Int;
    u8 => UInt(u64), UInt;
    u16 => UInt(u64), UInt;
    u32 => UInt(u64), UInt;
    u64 => UInt(u64), UInt;
    f64 => Float(f64), F64;
    bool => Bool(bool), Bool;
}

impl sealed::Sealed for f32 {}
impl RowElement for f32 {
    #[inline]
    fn into_value(self) -> Value {
        Value::Float(f64::from(self))
    }
    fn array(items: &[Self]) -> ArrayValue {
        ArrayValue::F32(items.to_vec())
    }
}

/// The default [`crate::RecordingReader::read_batches`]: rows from `read_row`, each written
/// straight into its typed columns.
pub fn read_batches_by_row_writer<R: crate::RecordingReader + ?Sized>(
    reader: &mut R,
    dst: &mut BatchSet,
) -> Result<bool> {
    if dst.is_full() {
        return Ok(true);
    }
    let mut writer = RowWriter::batches(dst);
    loop {
        match reader.read_row(&mut writer) {
            Ok(false) => return Ok(false),
            Ok(true) => {
                if writer.filled_a_batch() {
                    return Ok(true);
                }
            }
            Err(e) => {
                writer.abandon_row();
                return Err(name_value_error(e, reader.schema()));
            }
        }
    }
}

/// The default [`crate::RecordingReader::read_frame`]: one row from `read_row`, skipping
/// calls that wrote no row.
pub fn read_frame_by_row_writer<R: crate::RecordingReader + ?Sized>(
    reader: &mut R,
    dst: &mut FrameBuf,
) -> Result<bool> {
    loop {
        let mut writer = RowWriter::for_default_frame(dst);
        match reader.read_row(&mut writer) {
            Ok(false) => return Ok(false),
            Ok(true) if writer.rows() > 0 => return Ok(true),
            Ok(true) => continue,
            Err(e) => return Err(name_value_error(e, reader.schema())),
        }
    }
}

/// The default [`crate::RecordingReader::read_row`], for readers that implement
/// `read_frame`: the frame's values pushed one by one.
pub fn read_row_by_frames<R: crate::RecordingReader + ?Sized>(
    reader: &mut R,
    row: &mut RowWriter<'_>,
) -> Result<bool> {
    if row.from_default_frame {
        return Err(Error::invalid(format!(
            "the {} reader implements neither read_row nor read_frame",
            reader.format().id
        )));
    }
    let mut scratch = std::mem::take(&mut row.scratch);
    let result = (|| {
        if !reader.read_frame(&mut scratch)? {
            return Ok(false);
        }
        if row.begin(scratch.stream)? {
            for value in &scratch.values {
                row.push_value(value)?;
            }
            row.finish()?;
        }
        Ok(true)
    })();
    row.scratch = scratch;
    result
}
