#ifndef POSTERN_CLIBFUZZER_SHIM_H
#define POSTERN_CLIBFUZZER_SHIM_H
#include <stddef.h>
#include <stdint.h>

/* libFuzzer's driver (compiler-rt, linked in by -sanitize=fuzzer; no header ships with it): runs
 * the fuzzing loop over `callback` with libFuzzer's own command line. Nothing links it unless the
 * fuzz target is built with -sanitize=fuzzer and POSTERN_LIBFUZZER defined (bench/fuzz-links). */
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
#endif
