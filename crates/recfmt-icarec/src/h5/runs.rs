//! Runs of window rows copied straight into typed columns: the batch view of
//! [`IcarusH5Recording`](super::IcarusH5Recording)'s windows.

use recfmt_core::ColumnData;

use super::read::Window;

/// Checks (`write == false`) that rows `start..start + n` of a window fit a column of
/// `out`'s type exactly as the row path would store them, or appends them (`write == true`,
/// after a successful check).
pub(super) fn copy_run(
    out: &mut ColumnData,
    window: &Window,
    start: usize,
    n: usize,
    write: bool,
) -> bool {
    fn run<T: Copy>(v: &[T], start: usize, n: usize) -> Option<&[T]> {
        v.get(start..start.checked_add(n)?)
    }
    fn narrow<S: Copy, T: TryFrom<S>>(out: &mut Vec<T>, src: &[S], write: bool) -> bool {
        if write {
            out.extend(src.iter().filter_map(|&x| T::try_from(x).ok()));
            true
        } else {
            src.iter().all(|&x| T::try_from(x).is_ok())
        }
    }
    match (out, window) {
        (ColumnData::F64(o), Window::F64(v)) => run(v, start, n).is_some_and(|r| {
            if write {
                o.extend_from_slice(r);
            }
            true
        }),
        // The row path narrows a widened f32 with `as`, which is exact.
        (ColumnData::F32(o), Window::F64(v)) => run(v, start, n).is_some_and(|r| {
            if write {
                o.extend(r.iter().map(|&x| x as f32));
            }
            true
        }),
        (ColumnData::I64(o), Window::I64(v)) => run(v, start, n).is_some_and(|r| {
            if write {
                o.extend_from_slice(r);
            }
            true
        }),
        (ColumnData::U64(o), Window::U64(v)) => run(v, start, n).is_some_and(|r| {
            if write {
                o.extend_from_slice(r);
            }
            true
        }),
        (ColumnData::I32(o), Window::I64(v)) => {
            run(v, start, n).is_some_and(|r| narrow(o, r, write))
        }
        (ColumnData::I16(o), Window::I64(v)) => {
            run(v, start, n).is_some_and(|r| narrow(o, r, write))
        }
        (ColumnData::I8(o), Window::I64(v)) => {
            run(v, start, n).is_some_and(|r| narrow(o, r, write))
        }
        (ColumnData::U32(o), Window::U64(v)) => {
            run(v, start, n).is_some_and(|r| narrow(o, r, write))
        }
        (ColumnData::U16(o), Window::U64(v)) => {
            run(v, start, n).is_some_and(|r| narrow(o, r, write))
        }
        (ColumnData::U8(o), Window::U64(v)) => {
            run(v, start, n).is_some_and(|r| narrow(o, r, write))
        }
        _ => false,
    }
}
