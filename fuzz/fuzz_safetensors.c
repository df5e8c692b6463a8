/*
 * fuzz_safetensors.c - the safetensors checkpoint loader on hostile files.
 *
 * The input is the whole file. It is loaded (from an in-memory file) into
 * a fixed set of destination tensors of several dtypes and shapes: with no
 * names (the file alone is validated), with every name at once, with each
 * name alone, and into a lazy-device tensor. Properties checked:
 *   - no crash, no sanitizer report, no tensor handle leaked;
 *   - a failure comes with a status and a message, and leaves every
 *     destination exactly as it was;
 *   - the loads agree: a file rejected on its own rejects every load, and
 *     loading all names succeeds exactly when each name alone does;
 *   - a loaded tensor's bytes are bytes of the file's data section, and the
 *     lazy destination receives the same values as the cpu one.
 */
#include "fuzz_common.h"

typedef struct dest_spec {
    const char *name;
    lt_dtype dt;
    int ndim;
    int64_t dims[3];
} dest_spec;

/* The names the seed corpus and dictionary use. */
static const dest_spec dests[] = {
    {"a", LT_F32, 2, {2, 3}}, {"b", LT_I64, 1, {4}},      {"c", LT_U8, 0, {0}},     {"d", LT_BF16, 2, {0, 2}},
    {"e", LT_BOOL, 1, {3}},   {"f", LT_F16, 1, {1}},      {"g", LT_F64, 1, {2}},    {"h", LT_I32, 2, {2, 2}},
};
#define NDEST ((int)(sizeof dests / sizeof dests[0]))
#define SENTINEL 0xA5

static lt_device lazy_dev;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_common_init();
    lazy_dev = lt_device_parse("lazy");
    if (lt_lazy_set_backend("interp") != LT_OK)
        FUZZ_FAIL("cannot select the interp backend");
    return 0;
}

static size_t nbytes_of(lt_tensor *t) { return (size_t)lt_tensor_numel(t) * lt_dtype_size(lt_tensor_dtype(t)); }

/* Destination i filled with the sentinel byte pattern. */
static lt_tensor *make_dest(int i, lt_device dev)
{
    const dest_spec *s = &dests[i];
    unsigned char fill[64];
    memset(fill, SENTINEL, sizeof fill);
    if (s->dt == LT_BOOL)
        memset(fill, 1, sizeof fill); /* bools hold 0 or 1 only */
    lt_tensor *t = lt_from_data(fill, s->dims, s->ndim, s->dt, dev);
    FUZZ_CHECK(t != NULL, "creating destination %s", s->name);
    return t;
}

/* The host bytes of t (size nbytes_of(t), at most 64). */
static void host_bytes(lt_tensor *t, unsigned char *out)
{
    lt_status st = lt_copy_to_host(t, out, 64);
    FUZZ_CHECK(st == LT_OK, "reading a destination back");
}

static bool untouched(lt_tensor *t, int i)
{
    unsigned char b[64];
    host_bytes(t, b);
    unsigned char expect = dests[i].dt == LT_BOOL ? 1 : SENTINEL;
    for (size_t k = 0; k < nbytes_of(t); k++)
        if (b[k] != expect)
            return false;
    return true;
}

/* The data section: bytes after the 8-byte length and the header, when
 * the length prefix is in range (otherwise no load can succeed). */
static bool data_section(const uint8_t *data, size_t size, const uint8_t **start, size_t *len)
{
    if (size < 8)
        return false;
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = (hlen << 8) | data[i];
    if (hlen > size - 8)
        return false;
    *start = data + 8 + hlen;
    *len = size - 8 - (size_t)hlen;
    return true;
}

static lt_status load(const char *path, lt_tensor **ts, const char **names, int n)
{
    lt_clear_error();
    lt_status st = lt_load_safetensors(path, ts, names, n);
    FUZZ_CHECK(st == lt_last_status(), "load_safetensors returned %s but the error status is %s",
               lt_status_name(st), lt_status_name(lt_last_status()));
    return fuzz_status_of(st == LT_OK, "load_safetensors");
}

/* A successful load wrote bytes that the file's data section holds. */
static void check_loaded(lt_tensor *t, int i, const uint8_t *data, size_t size)
{
    size_t n = nbytes_of(t);
    if (n == 0)
        return;
    const uint8_t *sec = NULL;
    size_t sec_len = 0;
    FUZZ_CHECK(data_section(data, size, &sec, &sec_len), "tensor \"%s\" loaded from a file whose header length "
                                                         "is out of range", dests[i].name);
    unsigned char b[64];
    host_bytes(t, b);
    FUZZ_CHECK(memmem(sec, sec_len, b, n) != NULL, "tensor \"%s\" holds %zu bytes that are not in the data section",
               dests[i].name, n);
}

/* Loads destination 0 on the lazy device too: same outcome, same values. */
static void check_lazy(const char *path, lt_status cpu_status, lt_tensor *cpu_dest)
{
    lt_tensor *lz = make_dest(0, lazy_dev);
    const char *name = dests[0].name;
    lt_status st = load(path, &lz, &name, 1);
    FUZZ_CHECK(st == cpu_status, "loading \"a\" gave %s on cpu but %s on lazy", lt_status_name(cpu_status),
               lt_status_name(st));
    unsigned char a[64], b[64];
    host_bytes(cpu_dest, a);
    host_bytes(lz, b);
    FUZZ_CHECK(memcmp(a, b, nbytes_of(cpu_dest)) == 0, "\"a\" differs between the cpu and lazy destinations (%s)",
               lt_status_name(st));
    lt_release(lz);
    FUZZ_CHECK(lt_mark_step() == LT_OK, "mark_step after a lazy load");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int64_t live_before = lt_live_tensor_count();
    fuzz_file f;
    if (!fuzz_file_open(&f, "safetensors", data, size))
        return 0;
    lt_tensor *ts[NDEST];
    const char *names[NDEST];
    for (int i = 0; i < NDEST; i++) {
        ts[i] = make_dest(i, lt_device_cpu());
        names[i] = dests[i].name;
    }

    lt_status only_file = load(f.path, NULL, NULL, 0);
    lt_status all = load(f.path, ts, names, NDEST);
    for (int i = 0; i < NDEST; i++)
        FUZZ_CHECK(all == LT_OK || untouched(ts[i], i), "failed load (%s) changed \"%s\"", lt_status_name(all),
                   names[i]);
    FUZZ_CHECK(all != LT_OK || only_file == LT_OK, "every name loaded from a file rejected on its own (%s)",
               lt_status_name(only_file));

    bool each_ok = true;
    for (int i = 0; i < NDEST; i++) {
        lt_tensor *one = make_dest(i, lt_device_cpu());
        lt_status st = load(f.path, &one, &names[i], 1);
        FUZZ_CHECK(only_file == LT_OK || st != LT_OK, "\"%s\" loaded from a file rejected on its own", names[i]);
        if (st == LT_OK)
            check_loaded(one, i, data, size);
        else
            FUZZ_CHECK(untouched(one, i), "failed load (%s) changed \"%s\"", lt_status_name(st), names[i]);
        if (i == 0)
            check_lazy(f.path, st, one);
        each_ok &= st == LT_OK;
        lt_release(one);
    }
    FUZZ_CHECK((all == LT_OK) == each_ok, "loading every name gave %s, but each name alone %s", lt_status_name(all),
               each_ok ? "succeeds" : "does not");

    for (int i = 0; i < NDEST; i++)
        lt_release(ts[i]);
    fuzz_file_close(&f);
    lt_clear_error();
    FUZZ_CHECK(lt_live_tensor_count() == live_before, "%lld tensor handles leaked",
               (long long)(lt_live_tensor_count() - live_before));
    return 0;
}
