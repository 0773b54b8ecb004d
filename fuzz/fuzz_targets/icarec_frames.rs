//! libFuzzer entry point; the body is [`recfmt_fuzz::icarec_frames`].
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| recfmt_fuzz::icarec_frames(data));
