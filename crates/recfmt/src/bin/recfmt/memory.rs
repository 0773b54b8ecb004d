//! How the command line's allocator gives memory back.
//!
//! glibc's malloc raises its threshold for mapping a large block on its own each time such a
//! block is freed (up to 32 MiB), so the page and column buffers of a long Parquet conversion
//! end up in the heap, where freed ones stay resident: converting 10 GB of USVLOG peaked at
//! 239 MB against 173 MB for 1 GB. With the threshold fixed at 64 KiB every larger block is
//! mapped apart and returned when freed: 110 MB for 10 GB, 94 MB for 1 GB
//! (docs/PERFORMANCE.md). Only the binary sets this; a library leaves its host's allocator
//! alone.

/// Blocks of at least this many bytes are mapped on their own, and unmapped when freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD_BYTES: libc::c_int = 64 * 1024;

/// Fixes glibc's mapping threshold at 64 KiB (`MMAP_THRESHOLD_BYTES`), unless the user set one in
/// the environment (`MALLOC_MMAP_THRESHOLD_`), which glibc has read already. Call first in
/// `main`, before any other thread starts. Nothing to do with other allocators.
pub fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
        #[allow(unsafe_code)]
        // SAFETY: `mallopt` only changes a malloc parameter; it takes plain integers and is
        // called here before the program has started any other thread.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES);
        }
    }
}
