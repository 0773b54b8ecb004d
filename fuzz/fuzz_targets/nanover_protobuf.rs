//! libFuzzer entry point; the body is [`recfmt_fuzz::nanover_protobuf`].
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| recfmt_fuzz::nanover_protobuf(data));
