//! libFuzzer entry point; the body is [`recfmt_fuzz::carla_packets`].
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| recfmt_fuzz::carla_packets(data));
