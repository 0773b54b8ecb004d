//! How the command line's allocator gives memory back.
//!
//! glibc's malloc raises its threshold for mapping a large block on its own each time such a
//! block is freed (up to 32 MiB), so the page and column buffers of a long Parquet conversion
//! end up in the heap, where freed ones stay resident and fragment: converting 10 GB of USVLOG
//! peaked at 239 MB against 173 MB for 1 GB. A low fixed threshold (64 KiB, then 256 KiB)
//! kept memory down but mapped every batch column anew, page faults included: 1 GB took
//! 5.4-5.7 s (64 KiB) or 4.1-4.5 s (256 KiB) against 3.2 s, and ICAREC 4.6 s against 3.2 s.
//! Now the threshold stays at 4 MiB, so buffers are reused from the heap, and a thread gives
//! the heap's free pages back every 100 ms (`malloc_trim`): 1 GB peaks at 150 MB in 3.2-3.3 s,
//! 10 GB at 167 MB (docs/PERFORMANCE.md). Between trims a free no longer shrinks the heap
//! (a 64 MiB trim threshold), which spared the writers' next batches their page faults. Only
//! the binary does this; a library leaves its host's allocator alone.

/// Blocks of at least this many bytes are mapped on their own, and unmapped when freed; a
/// fixed threshold also stops glibc from raising it past the Parquet writers' large buffers.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD_BYTES: libc::c_int = 4 << 20;

/// A free leaves up to this much at the top of a heap instead of giving it back at once: the
/// trimming thread gives it back within [`TRIM_EVERY`]. glibc's default (128 KiB, fixed once
/// the mapping threshold is) shrank a writer thread's heap after nearly every batch, and the
/// next batch faulted the pages in again: converting 1 GB of NanoVer to Parquet took 1.35 M
/// page faults and 6.6 s, against 0.13 M and 4.3 s with 64 MiB.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD_BYTES: libc::c_int = 64 << 20;

/// How often the heap's free pages are given back: every 20 ms peaked at 110 MB (4.1 s),
/// 50 ms at 134 MB (3.7 s), 100 ms at 150 MB (3.2 s) for 1 GB of USVLOG to Parquet.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// Fixes glibc's mapping threshold at 4 MiB and its trim threshold at 64 MiB and starts a
/// thread that gives the heap's free pages back every [`TRIM_EVERY`] (`malloc_trim`), unless
/// the user set a threshold in the environment (`MALLOC_MMAP_THRESHOLD_`,
/// `MALLOC_TRIM_THRESHOLD_`), which glibc has read already. Call first in `main`, before any
/// other thread starts. Nothing to do with other allocators.
pub fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
        #[allow(unsafe_code)]
        // SAFETY: `mallopt` only changes a malloc parameter; it takes plain integers and is
        // called here before the program has started any other thread.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES);
            if std::env::var_os("MALLOC_TRIM_THRESHOLD_").is_none() {
                libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES);
            }
        }
        // A thread that cannot be started only leaves the heap as glibc keeps it.
        let _ = std::thread::Builder::new()
            .name("recfmt-trim".into())
            .spawn(|| {
                loop {
                    std::thread::sleep(TRIM_EVERY);
                    #[allow(unsafe_code)]
                    // SAFETY: `malloc_trim` only gives free heap pages back to the system; it
                    // takes the arenas' locks itself and may be called from any thread.
                    unsafe {
                        libc::malloc_trim(0);
                    }
                }
            });
    }
}
