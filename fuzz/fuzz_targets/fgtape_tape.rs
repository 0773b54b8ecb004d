//! libFuzzer entry point; the body is [`recfmt_fuzz::fgtape_tape`].
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| recfmt_fuzz::fgtape_tape(data));
