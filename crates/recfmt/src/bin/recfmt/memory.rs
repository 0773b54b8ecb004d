//! How the command line's allocator gives memory back.
//!
//! glibc's malloc raises its threshold for mapping a large block on its own each time such a
//! block is freed (up to 32 MiB), so the page and column buffers of a long Parquet conversion
//! end up in the heap, where freed ones stay resident: converting 10 GB of USVLOG peaked at
//! 239 MB against 173 MB for 1 GB. A fixed threshold maps larger blocks apart and unmaps them
//! when freed, but every block mapped anew costs page faults: at 64 KiB the 1 GB conversion
//! peaked at 94 MB but took 5.6 s instead of 3.2 s (4.4 s of system time against 0.9 s); at
//! 256 KiB, 112 MB and 3.7-4.0 s (10 GB: 143 MB); at 512 KiB, 161-169 MB and 3.2-3.6 s (10 GB:
//! 216 MB, over the 200 MB budget). 256 KiB keeps a 10 GB conversion well under the budget at
//! about a quarter of the time 64 KiB added (docs/PERFORMANCE.md). Only the binary sets this; a library
//! leaves its host's allocator alone.

/// Blocks of at least this many bytes are mapped on their own, and unmapped when freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD_BYTES: libc::c_int = 256 * 1024;

/// Fixes glibc's mapping threshold at 256 KiB (`MMAP_THRESHOLD_BYTES`), unless the user set one in
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
