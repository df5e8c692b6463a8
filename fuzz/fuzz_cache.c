/*
 * fuzz_cache.c - the disk cache's validation of a cached object's bytes,
 * lt_cc_object_valid(bytes, len, key), on hostile files.
 *
 * Input layout: 16 bytes of key (two little-endian u64), then the file.
 * The file is copied into a buffer of exactly its size, so any read
 * outside it is reported by ASan. Properties checked:
 *   - the verdict equals an independent reading of the documented format
 *     (body, then a 48-byte trailer: magic "LTSOv001", u64 body length,
 *     u64[2] checksum of the body, u64[2] key) with the checksum computed
 *     by the IR hash it is defined with;
 *   - the file with a freshly computed trailer for this key is valid, and
 *     stops being valid when any one byte of it changes, when it loses or
 *     gains a byte, or when the key differs.
 */
#include "fuzz_common.h"

#include "compiler/compiler.h"
#include "lazy/lazy.h"

#define TRAILER_BYTES 48
#define MAGIC "LTSOv001"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_common_init();
    return 0;
}

static uint64_t load_u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void store_u64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

/* The documented checksum: the IR hash over the body's 8-byte words, then
 * the zero-padded tail word xor (n << 56). */
static void checksum(const unsigned char *p, size_t n, uint64_t sum[2])
{
    lt_ir_hash_init(sum);
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        lt_ir_hash_u64(sum, load_u64(p + i));
    uint64_t tail = 0;
    memcpy(&tail, p + i, n - i);
    lt_ir_hash_u64(sum, tail ^ ((uint64_t)n << 56));
}

/* What lt_cc_object_valid must answer, read from the format's definition. */
static bool expected_valid(const unsigned char *b, size_t len, const uint64_t key[2])
{
    if (len < TRAILER_BYTES)
        return false;
    const unsigned char *t = b + len - TRAILER_BYTES;
    size_t body = len - TRAILER_BYTES;
    if (memcmp(t, MAGIC, 8) != 0 || load_u64(t + 8) != body || load_u64(t + 32) != key[0] ||
        load_u64(t + 40) != key[1])
        return false;
    uint64_t sum[2];
    checksum(b, body, sum);
    return load_u64(t + 16) == sum[0] && load_u64(t + 24) == sum[1];
}

/* lt_cc_object_valid on an exact-size copy (so overreads are caught). */
static bool valid(const unsigned char *b, size_t len, const uint64_t key[2])
{
    unsigned char *copy = malloc(len ? len : 1);
    FUZZ_CHECK(copy != NULL, "out of memory");
    memcpy(copy, b, len);
    bool v = lt_cc_object_valid(copy, len, key);
    free(copy);
    return v;
}

/* body followed by a correct trailer for key (caller frees). */
static unsigned char *sealed(const unsigned char *body, size_t n, const uint64_t key[2])
{
    unsigned char *s = malloc(n + TRAILER_BYTES + 1);
    FUZZ_CHECK(s != NULL, "out of memory");
    memcpy(s, body, n);
    unsigned char *t = s + n;
    memcpy(t, MAGIC, 8);
    store_u64(t + 8, n);
    uint64_t sum[2];
    checksum(body, n, sum);
    store_u64(t + 16, sum[0]);
    store_u64(t + 24, sum[1]);
    store_u64(t + 32, key[0]);
    store_u64(t + 40, key[1]);
    return s;
}

/* The sealed file is valid; every single change to it is not. */
static void check_sealed(const unsigned char *body, size_t n, const uint64_t key[2])
{
    size_t len = n + TRAILER_BYTES;
    unsigned char *s = sealed(body, n, key);
    FUZZ_CHECK(valid(s, len, key), "a %zu-byte body with a correct trailer is rejected", n);
    FUZZ_CHECK(!valid(s, len - 1, key), "a sealed file missing its last byte is accepted");
    FUZZ_CHECK(n == 0 || !valid(s + 1, len - 1, key), "a sealed file missing its first byte is accepted");
    s[len] = 0;
    FUZZ_CHECK(!valid(s, len + 1, key), "a sealed file with one byte appended is accepted");
    uint64_t other[2] = {key[0] ^ 1, key[1]};
    FUZZ_CHECK(!valid(s, len, other), "a sealed file is accepted for another key");
    other[0] = key[0];
    other[1] = key[1] ^ ((uint64_t)1 << 63);
    FUZZ_CHECK(!valid(s, len, other), "a sealed file is accepted for another key");
    /* One changed byte anywhere: in the body (checksum), in the trailer. */
    size_t pos = (size_t)(key[0] % len);
    unsigned char bit = (unsigned char)(1u << (key[1] % 8));
    s[pos] ^= bit;
    FUZZ_CHECK(!valid(s, len, key), "a sealed file with byte %zu of %zu changed (xor 0x%02x) is accepted", pos, len,
               bit);
    s[pos] ^= bit;
    free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 16)
        return 0;
    uint64_t key[2] = {load_u64(data), load_u64(data + 8)};
    const unsigned char *file = data + 16;
    size_t len = size - 16;

    bool got = valid(file, len, key);
    bool want = expected_valid(file, len, key);
    FUZZ_CHECK(got == want, "lt_cc_object_valid says %s for a %zu-byte file, the format says %s",
               got ? "valid" : "invalid", len, want ? "valid" : "invalid");
    FUZZ_CHECK(!lt_cc_object_valid(NULL, len, key), "NULL bytes accepted");
    FUZZ_CHECK(!lt_cc_object_valid(file, len, NULL), "NULL key accepted");

    /* Whatever the input, the part before a trailer-sized tail (or all of
     * it) sealed correctly must be accepted. */
    check_sealed(file, got ? len - TRAILER_BYTES : len, key);
    return 0;
}
