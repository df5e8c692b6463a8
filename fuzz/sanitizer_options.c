/*
 * sanitizer_options.c - default sanitizer settings of every fuzzer: stop
 * at the first UBSan report (the library is built with recoverable UBSan
 * so that a suppressions file can silence a known report, see README.md)
 * and print its stack. UBSAN_OPTIONS / ASAN_OPTIONS add to or override
 * these.
 */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) { return "halt_on_error=1:print_stacktrace=1"; }
