//! The process's allocator (mimalloc) and the one setting `serve` changes in it.
//!
//! The only `unsafe` of the workspace (which denies it everywhere else): one call into
//! mimalloc's C API, which the `mimalloc` crate does not wrap.

/// A large site's document is hundreds of thousands of small strings built and dropped in one go;
/// glibc's allocator spent a third of the entity build freeing them (benches/render.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc 3's `mimalloc.h` (the options enum keeps retired options
/// as placeholders, so an index never moves); `libmimalloc-sys` names no constant for it.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Gives freed pages back to the system as they are freed, instead of after mimalloc's delay
/// (1 s), which it counts only while the freeing thread goes on allocating. A service that has
/// decoded four 16 MiB messages and then sits idle kept 20 to 70 MB more resident than before
/// them, for as long as it stayed idle; with no delay it is back within a few MB
/// (cli/tests/accounting/flood.rs). The ingest benchmark shows what it costs (BENCHMARKS.md).
pub fn return_freed_pages_at_once() {
    // SAFETY: mi_option_set takes an option index and a value and only stores the value; the
    // index is a valid option of the mimalloc version libmimalloc-sys builds (checked by the test
    // below, which reads it back through the same index).
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
    }
}

#[cfg(test)]
mod tests {
    /// The index is mimalloc's purge delay: its default (1000 ms) reads back from it, then the
    /// value set.
    #[test]
    fn the_purge_delay_index_is_mimallocs_purge_delay() {
        #[allow(unsafe_code)]
        // SAFETY: reading an option by a valid index.
        let before = unsafe { libmimalloc_sys::mi_option_get(super::PURGE_DELAY) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(before, 1000, "mimalloc's default purge delay");
        }
        super::return_freed_pages_at_once();
        #[allow(unsafe_code)]
        // SAFETY: as above.
        let after = unsafe { libmimalloc_sys::mi_option_get(super::PURGE_DELAY) };
        assert_eq!(after, 0);
    }
}
