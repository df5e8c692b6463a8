/*
 * gen_seeds.c - writes the seed corpora of fuzz/corpus/<fuzzer>/: small
 * valid inputs from which the fuzzers start. Run from the repository root
 * (build-fuzz/fuzz/gen_seeds fuzz/corpus) after changing an input format;
 * the files it writes are kept in the repository.
 */
#include "plan_graphs.h"
#include "program.h"

#include "compiler/compiler.h"
#include "lazy/lazy.h"

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static const char *root;

static void write_seed(const char *fuzzer, const char *name, const void *data, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, fuzzer);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/seed-%s", root, fuzzer, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "gen_seeds: cannot write %s\n", path);
        exit(1);
    }
}

static unsigned char *read_whole(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = malloc(1 << 24);
    *n = fread(buf, 1, 1 << 24, f);
    fclose(f);
    return buf;
}

/* ---- safetensors ---------------------------------------------------------------- */

/* Values 0, 1, 2, 0, 1, ... in dtype dt (bools: 0, 1, 0, ...). */
static lt_tensor *filled(lt_dtype dt, const int64_t *dims, int ndim)
{
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++)
        numel *= dims[d];
    lt_tensor *t = lt_arange(0, (double)numel, 1, LT_F64, lt_device_cpu());
    lt_tensor *shaped = lt_reshape(t, dims, ndim);
    return lt_to_dtype(lt_remainder_scalar(shaped, dt == LT_BOOL ? 2 : 3), dt);
}

static void safetensors_seeds(const char *tmp)
{
    const char *names[] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    lt_tensor *ts[8] = {
        filled(LT_F32, (int64_t[]){2, 3}, 2), filled(LT_I64, (int64_t[]){4}, 1),
        filled(LT_U8, NULL, 0),               filled(LT_BF16, (int64_t[]){0, 2}, 2),
        filled(LT_BOOL, (int64_t[]){3}, 1),   filled(LT_F16, (int64_t[]){1}, 1),
        filled(LT_F64, (int64_t[]){2}, 1),    filled(LT_I32, (int64_t[]){2, 2}, 2),
    };
    char path[512];
    snprintf(path, sizeof path, "%s/all.safetensors", tmp);
    const int counts[3] = {8, 2, 0};
    const char *labels[3] = {"all", "two", "empty"};
    for (int i = 0; i < 3; i++) {
        if (lt_save_safetensors(path, ts, names, counts[i]) != LT_OK) {
            fprintf(stderr, "gen_seeds: %s\n", lt_last_error());
            exit(1);
        }
        size_t n;
        unsigned char *b = read_whole(path, &n);
        write_seed("fuzz_safetensors", labels[i], b, n);
        free(b);
    }
    /* Metadata and a dtype the library lacks (validated, not loadable). */
    static const char header[] = "{\"__metadata__\":{\"format\":\"pt\"},\"x\":{\"dtype\":\"I16\",\"shape\":[2],"
                                 "\"data_offsets\":[0,4]},\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],"
                                 "\"data_offsets\":[4,28]}}";
    unsigned char file[8 + sizeof header - 1 + 28] = {0};
    uint64_t hlen = sizeof header - 1;
    for (int i = 0; i < 8; i++)
        file[i] = (unsigned char)(hlen >> (8 * i));
    memcpy(file + 8, header, hlen);
    for (int i = 0; i < 28; i++)
        file[8 + hlen + (size_t)i] = (unsigned char)(i * 7);
    write_seed("fuzz_safetensors", "metadata", file, sizeof file);
}

/* ---- IDX ---------------------------------------------------------------------------- */

static size_t idx_images(unsigned char *p, int count, int rows, int cols)
{
    unsigned char hdr[16] = {0, 0, 8, 3, 0, 0, 0, (unsigned char)count, 0, 0, 0, (unsigned char)rows,
                             0, 0, 0, (unsigned char)cols};
    memcpy(p, hdr, 16);
    for (int i = 0; i < count * rows * cols; i++)
        p[16 + i] = (unsigned char)(i * 37);
    return 16 + (size_t)(count * rows * cols);
}

static size_t idx_labels(unsigned char *p, int count)
{
    unsigned char hdr[8] = {0, 0, 8, 1, 0, 0, 0, (unsigned char)count};
    memcpy(p, hdr, 8);
    for (int i = 0; i < count; i++)
        p[8 + i] = (unsigned char)(i % 10);
    return 8 + (size_t)count;
}

static void idx_seed(const char *name, int flags, int count, int rows, int cols, bool pre_gzip)
{
    unsigned char img[512], lab[64], out[1024];
    size_t ni = idx_images(img, count, rows, cols), nl = idx_labels(lab, count);
    if (pre_gzip) { /* the images file itself is gzip: the fuzzer mutates compressed bytes */
        unsigned char z[512];
        uLongf zn = sizeof z;
        z_stream s = {0};
        deflateInit2(&s, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
        s.next_in = img, s.avail_in = (uInt)ni, s.next_out = z, s.avail_out = (uInt)zn;
        deflate(&s, Z_FINISH);
        zn = s.total_out;
        deflateEnd(&s);
        memcpy(img, z, zn);
        ni = zn;
    }
    out[0] = (unsigned char)flags;
    out[1] = (unsigned char)(ni & 0xff);
    out[2] = (unsigned char)(ni >> 8);
    memcpy(out + 3, img, ni);
    memcpy(out + 3 + ni, lab, nl);
    write_seed("fuzz_idx", name, out, 3 + ni + nl);
}

/* ---- disk-cache objects --------------------------------------------------------------- */

static void cache_synthetic(void)
{
    /* key, then a short body and its trailer (the format fuzz_cache.c reads) */
    unsigned char b[16 + 24 + 48];
    uint64_t key[2] = {0x0123456789abcdefull, 0xfedcba9876543210ull};
    memcpy(b, key, 16);
    for (int i = 0; i < 24; i++)
        b[16 + i] = (unsigned char)("\177ELF a cached object..."[i]);
    unsigned char *t = b + 40;
    memcpy(t, "LTSOv001", 8);
    uint64_t body = 24, sum[2];
    memcpy(t + 8, &body, 8);
    lt_ir_hash_init(sum);
    for (int i = 0; i < 24; i += 8) {
        uint64_t w;
        memcpy(&w, b + 16 + i, 8);
        lt_ir_hash_u64(sum, w);
    }
    lt_ir_hash_u64(sum, 0 ^ ((uint64_t)24 << 56));
    memcpy(t + 16, sum, 16);
    memcpy(t + 32, key, 16);
    if (!lt_cc_object_valid(b + 16, 24 + 48, key)) {
        fprintf(stderr, "gen_seeds: the synthetic cache object is not valid\n");
        exit(1);
    }
    write_seed("fuzz_cache", "synthetic", b, sizeof b);
}

/* A real object: compiles a tiny lazy program into a fresh cache dir. */
static void cache_real(const char *tmp)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/cache", tmp);
    mkdir(dir, 0700);
    setenv("LT_CACHE_DIR", dir, 1);
    if (lt_lazy_set_backend("cpu") != LT_OK) {
        fprintf(stderr, "gen_seeds: no compiled backend (%s); skipping the real cache object\n", lt_last_error());
        return;
    }
    lt_tensor *x = lt_ones((int64_t[]){4}, 1, LT_F32, lt_device_parse("lazy"));
    lt_tensor *y = lt_exp(lt_add_scalar(x, 2));
    double v;
    lt_item(lt_sum(y, NULL, 0, false), &v);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".so") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t n;
        unsigned char *b = read_whole(path, &n);
        unsigned char *seed = malloc(n + 16);
        memcpy(seed, b + n - 16, 16); /* the trailer's key */
        memcpy(seed + 16, b, n);
        write_seed("fuzz_cache", "compiled", seed, n + 16);
        free(seed);
        free(b);
        break;
    }
    if (d)
        closedir(d);
}

/* ---- programs (the byte code of program.h) ------------------------------------------------ */

typedef struct code {
    unsigned char b[1024];
    size_t n;
} code;

static void emit(code *c, int n, const int *bytes)
{
    for (int i = 0; i < n; i++)
        c->b[c->n++] = (unsigned char)bytes[i];
}
#define E(c, ...) emit((c), (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), (int[]){__VA_ARGS__})

/* Byte values of the decoder's tables (program_decode.c, program_ops.c). */
#define OP(op) prog_byte_of_op(op)
enum { D_F32 = 0, D_F64 = 3, D_I32 = 4, D_I64 = 5, D_BOOL = 6, D_F16 = 7, D_BF16 = 8, D_U8 = 9 };
static int size_byte(int size) { return size == 0 ? 4 : size - 1; }
static int float_byte(double v) { return (int)(v * 2 + 16); }
/* scalar table: 0 1 -1 2 0.5 -2.5 3 4 -0 nan inf -inf 1e30 1e-30 7 100 */
enum { S_0, S_1, S_M1, S_2, S_HALF, S_M2_5, S_3, S_4, S_M0, S_NAN, S_INF, S_MINF, S_BIG, S_TINY, S_7, S_100 };

/* P_NEW: slot, dtype, shape, then one byte per element from vals. */
static void new_tensor(code *c, int slot, int dtype, int ndim, const int *dims, int first)
{
    E(c, OP(P_NEW), slot, dtype, ndim);
    int numel = 1;
    for (int d = 0; d < ndim; d++) {
        E(c, size_byte(dims[d]));
        numel *= dims[d];
    }
    bool is_float = dtype == D_F32 || dtype == D_F64 || dtype == D_F16 || dtype == D_BF16;
    for (int i = 0; i < numel; i++)
        E(c, is_float ? float_byte((double)((first + i * 3) % 13) * 0.5 - 3) : (first + i) % 7 + 6);
}
#define NEW(c, slot, dtype, first, ...) \
    new_tensor((c), (slot), (dtype), (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), (int[]){__VA_ARGS__}, (first))
#define NEW0(c, slot, dtype, first) new_tensor((c), (slot), (dtype), 0, NULL, (first))

static void program_views(code *c)
{
    NEW(c, 0, D_F32, 1, 3, 4);
    E(c, OP(P_NARROW), 1, 0, 2, 2, 2);          /* t1 = narrow(t0, 1, 1, 2)   [3,2] */
    E(c, OP(P_TRANSPOSE), 2, 1, 1, 2);          /* t2 = transpose(t1, 0, 1)   [2,3] */
    E(c, OP(P_SELECT), 3, 2, 1, 4);             /* t3 = select(t2, 0, 1)      [3] */
    E(c, OP(P_INPLACE_SCALAR), 3, 2, S_2, 0);   /* add_scalar_(t3, 2) */
    E(c, OP(P_READ), 0, 0);
    E(c, OP(P_INPLACE_SCALAR), 1, 0, S_7, 0);   /* fill_(t1, 7) */
    E(c, OP(P_BARRIER), 0);
    E(c, OP(P_READ), 2, 0);
    E(c, OP(P_DIAGONAL), 4, 0, 2, 0x21);        /* t4 = diagonal(t0, 0, 0, 1) [3] */
    E(c, OP(P_INPLACE), 4, 4, 2, S_0);          /* mul_(t4, t4) */
    E(c, OP(P_RESHAPE), 5, 0, 0, 1);            /* t5 = view(t0, {-1}) */
    E(c, OP(P_SQUEEZE), 1, 4, 2, 1);            /* t1 = unsqueeze(t4, 0)      [1,3] */
    E(c, OP(P_EXPAND), 2, 1, 0, 1, 3, 1);       /* t2 = expand(t1, {4, 3}) */
    E(c, OP(P_INPLACE_SCALAR), 2, 2, S_1, 0);   /* add_scalar_(t2, 1): expanded, refused */
    E(c, OP(P_REDUCE), 3, 2, 0, 1, 0, 1);       /* t3 = sum(t2, {0}) */
    E(c, OP(P_READ), 3, 0);
    E(c, OP(P_RELEASE), 0);                     /* t0 released, its views live on */
    E(c, OP(P_USE_RELEASED), 0, 1, 1);          /* add_scalar(dead0, 1) */
    E(c, OP(P_READ), 5, 0);
    E(c, OP(P_MATMUL), 0, 1, 2);                /* [1,3] x [4,3]: refused */
    E(c, OP(P_BARRIER), 2);
    E(c, OP(P_READ), 1, 0);
}

static void program_reductions(code *c)
{
    NEW(c, 0, D_F32, 2, 2, 0, 3);           /* an empty [2,0,3] */
    E(c, OP(P_REDUCE), 1, 0, 0, 1, 0, 2);       /* sum over the empty dim 1 */
    E(c, OP(P_REDUCE), 2, 0, 1, 1, 1, 2);       /* mean, keepdim */
    E(c, OP(P_REDUCE), 3, 0, 2, 0, 0);          /* prod of everything */
    E(c, OP(P_REDUCE), 4, 0, 3, 1, 0, 2);       /* amax over the empty dim: refused */
    E(c, OP(P_READ), 1, 0);
    E(c, OP(P_READ), 2, 0);
    E(c, OP(P_READ), 3, 2);                     /* item */
    NEW(c, 0, D_I64, 3, 2, 3);
    E(c, OP(P_REDUCE), 1, 0, 2, 1, 0, 2);       /* prod over dim 1 */
    E(c, OP(P_ROWWISE), 2, 0, 0, 2);            /* argmax(t0, 1) */
    E(c, OP(P_ROWWISE), 3, 0, 5, 1);            /* cumsum(t0, 0) */
    E(c, OP(P_CAST), 4, 0, 0, D_F32);           /* to f32 */
    E(c, OP(P_ROWWISE), 5, 4, 3, 0);            /* softmax(t4, -1) */
    E(c, OP(P_REDUCE), 1, 4, 8, 2, 1, 1, 2);    /* var over {0, 1} */
    E(c, OP(P_BARRIER), 1);
    E(c, OP(P_READ), 5, 0);
    NEW(c, 0, D_F32, 0, 0);                 /* [0] */
    E(c, OP(P_REDUCE), 2, 0, 0, 0, 0);          /* sum of nothing: 0 */
    E(c, OP(P_REDUCE), 3, 0, 4, 0, 0);          /* amin of nothing: refused */
    E(c, OP(P_REDUCE), 4, 0, 6, 0, 1);          /* any, keepdim */
    E(c, OP(P_READ), 2, 2);
    E(c, OP(P_READ), 4, 0);
}

static void program_index(code *c)
{
    NEW(c, 0, D_F32, 4, 3, 4);
    E(c, OP(P_GATHER), 1, 0, 2, 3, 2, 1, 4, 2, 3, 1, 2); /* gather(t0, 1, [3,2] in range) */
    E(c, OP(P_READ), 1, 0);
    E(c, OP(P_GATHER), 2, 0, 2, 2, 1, 1, 5);             /* an index of 4 on a dim of 4: refused */
    E(c, OP(P_READ), 0, 0);
    E(c, OP(P_INDEX_SELECT), 3, 0, 0, 1, 3, 3, 1, 2);    /* index_select(t0, 0, {2, 0, 1}) */
    E(c, OP(P_SCATTER), 4, 0, 0x82, S_2, 2, 2, 1, 2, 3, 2); /* scatter_add(t0, 1, ...) */
    E(c, OP(P_BARRIER), 0);
    E(c, OP(P_READ), 4, 0);
    NEW(c, 5, D_I64, 1, 4);
    E(c, OP(P_INDEX_SELECT), 2, 0, 1, 0, 2, 1, 3);       /* embedding(t0, {0, 2}) */
    E(c, OP(P_INDEX_SELECT), 3, 0, 2, 4, 2, 1, 4);       /* one_hot({0, 3}, 4) */
    E(c, OP(P_WHERE), 1, 0, 4, 0, 0, S_0);               /* where(t0 > 0, t4, t0) */
    E(c, OP(P_WHERE), 2, 0, 4, 0, 1, S_100);             /* masked_fill(t4, t0 > 0, 100) */
    E(c, OP(P_READ), 1, 0);
    E(c, OP(P_READ), 2, 0);
    E(c, OP(P_READ), 3, 3);
}

static void program_inplace_views(code *c)
{
    NEW(c, 0, D_F32, 5, 2, 3, 4);
    E(c, OP(P_PERMUTE), 1, 0, 0x06, 1);          /* t1 = permute(t0, ...) */
    E(c, OP(P_SLICE), 2, 1, 3, 5 + 11 * 10, 2);  /* t2 = slice(t1, 2, 0, 5, 2) */
    E(c, OP(P_INPLACE), 2, 2, 0, S_0);           /* add_(t2, t2) */
    E(c, OP(P_INPLACE_SCALAR), 2, 4, S_M2_5, 0); /* mul_scalar_(t2, -2.5) */
    E(c, OP(P_READ), 0, 0);
    E(c, OP(P_SELECT), 3, 0, 3, 1 + 4 + 1);      /* t3 = select(t0, 2, 1)  [2,3] */
    NEW(c, 4, D_I32, 2, 3);
    E(c, OP(P_INPLACE), 3, 4, 7, S_0);           /* copy_(t3, t4): i32 into f32 view */
    E(c, OP(P_INPLACE), 3, 4, 0, S_0);           /* add_(t3, t4) */
    E(c, OP(P_INPLACE_SCALAR), 3, 7, S_M1, S_1); /* clamp_(t3, -1, 1) */
    E(c, OP(P_RESHAPE), 5, 3, 1, 2 | 1 << 2, 2); /* t5 = reshape(t3, {3, -1}) */
    E(c, OP(P_INPLACE_SCALAR), 5, 9, 0, 0);      /* relu_(t5) */
    E(c, OP(P_BARRIER), 2);
    E(c, OP(P_READ), 0, 1);
    E(c, OP(P_READ), 5, 0);
    E(c, OP(P_RELEASE), 3);
    E(c, OP(P_USE_RELEASED), 0, 3, 0);           /* add_(dead0, t0) */
    E(c, OP(P_USE_RELEASED), 0, 5, 0);           /* release again */
    E(c, OP(P_READ), 5, 0);
}

static void program_mixed(code *c)
{
    E(c, OP(P_FACTORY), 0, D_F32, 0, 2, size_byte(2), size_byte(3), S_0, S_0, 0); /* zeros [2,3] */
    E(c, OP(P_FACTORY), 1, D_I64, 3, 0, S_0, S_0, 4 + 9 * 7);                    /* arange */
    E(c, OP(P_FACTORY), 2, D_F64, 4, 0, S_0, S_0, 3 + 5 * 2);                    /* eye(3, 2) */
    E(c, OP(P_FACTORY), 3, D_BF16, 2, 1, size_byte(3), S_HALF, S_0, 0);          /* full */
    E(c, OP(P_BINARY), 4, 0, 3, 0, S_0);          /* add, broadcast [2,3] + [3] */
    E(c, OP(P_BINARY), 5, 1, 1, 7, S_0);          /* remainder(int, int): divides by 0 */
    E(c, OP(P_SCALAR), 5, 4, 3, S_3, 0);          /* mul_scalar */
    E(c, OP(P_UNARY), 0, 5, 10);                  /* tanh */
    E(c, OP(P_MATMUL), 1, 2, 0);                  /* [3,2] x [2,3] */
    E(c, OP(P_CAT), 3, 0, 5, 1);                  /* cat dim 0 */
    E(c, OP(P_CAT), 4, 0, 5, 0x83);               /* stack dim 0 */
    E(c, OP(P_READ), 1, 0);
    E(c, OP(P_READ), 3, 0);
    E(c, OP(P_READ), 4, 0);
    NEW0(c, 2, D_F16, 3);                     /* a 0-dim f16 */
    E(c, OP(P_SQUEEZE), 0, 2, 2, 1);              /* unsqueeze */
    E(c, OP(P_EXPAND), 1, 0, 2, 1, 2, 0);         /* expand with a new leading dim */
    E(c, OP(P_CAST), 3, 1, 8, 0);                 /* clone of an expanded tensor */
    E(c, OP(P_CAST), 4, 1, 10, 0);                /* contiguous */
    E(c, OP(P_BARRIER), 0);
    E(c, OP(P_READ), 3, 0);
    E(c, OP(P_READ), 2, 2);
}

/* Chains: expressions whose intermediates die, fused by the compiler.
 * Layout: dst, src, n - 1, n link kinds, then (arg, other slot, scalar)
 * per link (program_ops.c, chain_link). */
static void program_chains(code *c)
{
    NEW(c, 0, D_F32, 1, 2, 3);
    NEW(c, 1, D_F32, 4, 3);
    E(c, OP(P_CHAIN), 2, 0, 2, 0, 3, 4);           /* t2 = reshape(transpose(exp(t0))) */
    E(c, 2, 0, 0, 0, 0, 0, 0, 0, 0);
    E(c, OP(P_READ), 2, 0);
    E(c, OP(P_CHAIN), 3, 0, 2, 1, 2, 5);           /* t3 = sum(t1 + t0 * 3, dim 0) */
    E(c, 3, 0, S_3, 0, 1, 0, 0, 0, 0);
    E(c, OP(P_CHAIN), 4, 0, 2, 6, 0, 7);           /* t4 = flatten(exp(narrow(t0, 1, 1, 1))) */
    E(c, 1, 0, 0, 2, 0, 0, 0, 0, 0);
    E(c, OP(P_BARRIER), 0);
    E(c, OP(P_READ), 3, 0);
    E(c, OP(P_READ), 4, 0);
    NEW(c, 0, D_F32, 2, 2, 0);                     /* an empty [2,0] */
    E(c, OP(P_CHAIN), 5, 0, 2, 4, 5, 1);           /* t5 = sum(reshape(t0), dim -2) + 1 */
    E(c, 0, 0, 0, 0x80, 0, 0, 0, 0, S_1);
    E(c, OP(P_READ), 5, 0);
}

static void program_seeds(void)
{
    void (*progs[])(code *) = {program_views, program_reductions, program_index, program_inplace_views,
                               program_mixed, program_chains};
    const char *names[] = {"views", "reductions", "index", "inplace-views", "mixed", "chains"};
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
        code c = {.n = 0};
        progs[i](&c);
        write_seed("fuzz_program", names[i], c.b, c.n);
    }
}

/* fuzz_plan: the selector byte, then the plan part of a real entry for
 * each of the two graphs (what follows the header and the graph bytes). */
static void plan_seed(const char *name, bool fused)
{
    small_graph sg;
    if (fused)
        make_fused_graph(&sg, 4);
    else
        make_graph(&sg, 4);
    kir_plan plan;
    kir_bytes graph;
    if (kir_schedule(&plan, &sg.g) != LT_OK || kir_memplan(&plan) != LT_OK || !kir_graph_bytes(&sg.g, &graph)) {
        fprintf(stderr, "gen_seeds: cannot plan the %s graph: %s\n", name, lt_last_error());
        exit(1);
    }
    static const uint64_t key[2] = {0x1234, 0x5678}, object[2] = {0x9abc, 0xdef0};
    kir_plan_info info = {.kernels = plan.nk, .calls = plan.ncalls, .bytes = 1000, .units = 1};
    size_t len = 0;
    unsigned char *entry = kir_plan_encode(&plan, &info, &graph, key, object, &len);
    size_t skip = 64 + 8 + graph.n;
    if (!entry || len < skip) {
        fprintf(stderr, "gen_seeds: cannot encode the %s graph's plan\n", name);
        exit(1);
    }
    unsigned char *seed = malloc(len - skip + 1);
    seed[0] = fused ? 1 : 0;
    memcpy(seed + 1, entry + skip, len - skip);
    write_seed("fuzz_plan", name, seed, len - skip + 1);
    free(seed);
    free(entry);
    kir_graph_bytes_free(&graph);
    kir_plan_free(&plan);
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_seeds <corpus dir, e.g. fuzz/corpus>\n");
        return 2;
    }
    root = argv[1];
    mkdir(root, 0755);
    char tmp[] = "/tmp/lt-seeds-XXXXXX";
    if (!mkdtemp(tmp))
        return 1;
    lt_scope_begin();
    safetensors_seeds(tmp);
    idx_seed("plain", 0, 2, 2, 3, false);
    idx_seed("gzip-both", 3 | 4 << 2, 3, 1, 2, false);
    idx_seed("gzip-raw", 0, 2, 3, 3, true);
    idx_seed("empty", 0, 0, 28, 28, false);
    cache_synthetic();
    program_seeds();
    cache_real(tmp);
    plan_seed("call-and-kernel", false);
    plan_seed("fused-gemm", true);
    lt_scope_end();
    return nftw(tmp, remove_entry, 8, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : 1;
}
