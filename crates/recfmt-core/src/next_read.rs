//! The step every iterator of the low-level readers takes.

/// One step of an iterator over a noodles-style `read_x(&mut item) -> Result<bool, E>` method
/// (the low-level readers' `packets()`, `records()`, `frames()`): a fresh item read into,
/// `None` at a clean end, and after an error `None` for good (`ended` records both), so a
/// reader that failed is not asked again.
///
/// ```
/// let mut items = vec![Ok(2), Ok(1), Err("torn")].into_iter();
/// let mut read = |n: &mut u32| match items.next() {
///     Some(Ok(0)) | None => Ok(false),
///     Some(Ok(x)) => {
///         *n = x;
///         Ok(true)
///     }
///     Some(Err(e)) => Err(e),
/// };
/// let mut ended = false;
/// assert_eq!(recfmt_core::next_read(&mut ended, &mut read), Some(Ok(2)));
/// assert_eq!(recfmt_core::next_read(&mut ended, &mut read), Some(Ok(1)));
/// assert_eq!(recfmt_core::next_read(&mut ended, &mut read), Some(Err("torn")));
/// assert_eq!(recfmt_core::next_read(&mut ended, &mut read), None);
/// assert!(ended);
/// ```
pub fn next_read<T: Default, E>(
    ended: &mut bool,
    read: impl FnOnce(&mut T) -> Result<bool, E>,
) -> Option<Result<T, E>> {
    if *ended {
        return None;
    }
    let mut item = T::default();
    match read(&mut item) {
        Ok(true) => Some(Ok(item)),
        Ok(false) => {
            *ended = true;
            None
        }
        Err(e) => {
            *ended = true;
            Some(Err(e))
        }
    }
}
