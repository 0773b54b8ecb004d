//! libFuzzer entry point; the body is [`recfmt_fuzz::usvlog_batches`].
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| recfmt_fuzz::usvlog_batches(data));
