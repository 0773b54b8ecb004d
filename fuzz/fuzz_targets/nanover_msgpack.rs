//! libFuzzer entry point; the body is [`recfmt_fuzz::nanover_msgpack`].
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| recfmt_fuzz::nanover_msgpack(data));
