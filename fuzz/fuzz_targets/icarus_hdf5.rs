//! libFuzzer entry point; the body is [`recfmt_fuzz::icarus_hdf5`].
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| recfmt_fuzz::icarus_hdf5(data));
