/* test_plan_cache.c - execution plans on disk (src/compiler/plan_cache.c,
 * plan_codec.c).
 *
 * The codec: a plan scheduled for a small graph (an eager call, a fused
 * pointwise kernel with a runtime scalar, a donatable output, a leaf
 * handed back as a root) survives encode and decode field by field; every
 * flipped byte, every truncation, an extra byte, another key and another
 * graph are refused; hostile entries whose checksum is right (each word
 * of the plan replaced by values chosen to break bounds) are refused or
 * decode to a plan whose every index and size is in range (the sanitizer
 * build checks that nothing is read out of bounds either way).
 *
 * The cache: a child process (this binary again, LT_TEST_CHILD set, cpu
 * backend, its own LT_CACHE_DIR) runs a small MLP step; a second child
 * finds every graph's plan (no schedule, no render) with the same values;
 * a damaged or truncated entry is counted, deleted and rebuilt, values
 * unchanged; a plan whose object was evicted compiles again. */
#include "lt_test.h"
#include "plan_graphs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the codec ---------------------------------------------------------------------------------- */

typedef struct encoded {
    small_graph sg;
    kir_plan plan;
    kir_plan_info info;
    kir_bytes graph;
    unsigned char *bytes;
    size_t len;
} encoded;

static const uint64_t entry_key[2] = {0x1234, 0x5678}, object_key[2] = {0x9abc, 0xdef0};

static void encode_small(encoded *e)
{
    make_graph(&e->sg, 4);
    assert_int_equal(kir_schedule(&e->plan, &e->sg.g), LT_OK);
    assert_int_equal(kir_memplan(&e->plan), LT_OK);
    assert_int_equal(e->plan.ncalls, 1); /* the matmul */
    e->info = (kir_plan_info){.kernels = e->plan.nk, .functions = 1, .calls = 1, .bytes = 1000, .units = 1};
    assert_true(kir_graph_bytes(&e->sg.g, &e->graph));
    e->bytes = kir_plan_encode(&e->plan, &e->info, &e->graph, entry_key, object_key, &e->len);
    assert_non_null(e->bytes);
}

static void encode_fused(encoded *e)
{
    make_fused_graph(&e->sg, 4);
    assert_int_equal(kir_schedule(&e->plan, &e->sg.g), LT_OK);
    assert_int_equal(kir_memplan(&e->plan), LT_OK);
    assert_int_equal(e->plan.nfused_gemm, 1);
    assert_int_equal(e->plan.nk, 1); /* the gemm alone */
    e->info = (kir_plan_info){.kernels = 1, .calls = 1, .fused_gemm = 1, .bytes = 1000, .units = 1};
    assert_true(kir_graph_bytes(&e->sg.g, &e->graph));
    e->bytes = kir_plan_encode(&e->plan, &e->info, &e->graph, entry_key, object_key, &e->len);
    assert_non_null(e->bytes);
}

static void free_encoded(encoded *e)
{
    free(e->bytes);
    kir_graph_bytes_free(&e->graph);
    kir_plan_free(&e->plan);
}

static bool decodes(const encoded *e, const unsigned char *bytes, size_t len)
{
    kir_plan p;
    kir_plan_info info;
    uint64_t object[2];
    bool ok = kir_plan_decode(bytes, len, &e->sg.g, &e->graph, entry_key, &p, &info, object);
    if (ok)
        kir_plan_free(&p);
    return ok;
}

static void test_round_trip(void **state)
{
    (void)state;
    encoded e;
    encode_small(&e);
    kir_plan p;
    kir_plan_info info;
    uint64_t object[2];
    assert_true(kir_plan_decode(e.bytes, e.len, &e.sg.g, &e.graph, entry_key, &p, &info, object));
    assert_int_equal(object[0], object_key[0]);
    assert_int_equal(object[1], object_key[1]);
    assert_memory_equal(&info, &e.info, sizeof info);
    assert_int_equal(p.nb, e.plan.nb);
    assert_int_equal(p.ws_size, e.plan.ws_size);
    bool donor = false;
    for (int b = 0; b < p.nb; b++) {
        assert_int_equal(p.b[b].kind, e.plan.b[b].kind);
        assert_int_equal(p.b[b].slot, e.plan.b[b].slot);
        assert_int_equal(p.b[b].donor, e.plan.b[b].donor);
        assert_int_equal(p.b[b].offset, e.plan.b[b].offset);
        assert_int_equal(p.b[b].nbytes, e.plan.b[b].nbytes);
        assert_int_equal(p.b[b].value, e.plan.b[b].value);
        donor = donor || p.b[b].donor >= 0;
    }
    assert_true(donor); /* the output may take leaf c's buffer */
    for (uint32_t r = 0; r < e.sg.g.nroots; r++)
        assert_int_equal(p.root_buf[r], e.plan.root_buf[r]);
    assert_int_equal(p.ncalls, 1);
    const kir_call *c = &p.calls[0], *want = &e.plan.calls[0];
    assert_int_equal(c->node, want->node);
    assert_int_equal(c->nin, 2);
    assert_int_equal(c->nout, 1);
    assert_int_equal(c->out[0], want->out[0]);
    for (int k = 0; k < c->nin; k++) {
        assert_int_equal(c->in[k].buf, want->in[k].buf);
        assert_int_equal(c->in[k].offset, want->in[k].offset);
        assert_memory_equal(c->in[k].strides, want->in[k].strides, sizeof(int64_t) * 2);
    }
    kir_plan_free(&p);
    free_encoded(&e);
}

static void test_damage_refused(void **state)
{
    (void)state;
    encoded e;
    encode_small(&e);
    unsigned char *copy = malloc(e.len + 1);
    for (size_t i = 0; i < e.len; i++) { /* every byte, one bit each */
        memcpy(copy, e.bytes, e.len);
        copy[i] ^= (unsigned char)(1u << (i % 8));
        assert_false(decodes(&e, copy, e.len));
        assert_false(kir_plan_check(copy, e.len, &e.sg.g, &e.graph, entry_key));
    }
    for (size_t n = 0; n < e.len; n++) /* every truncation */
        assert_false(decodes(&e, e.bytes, n));
    memcpy(copy, e.bytes, e.len);
    copy[e.len] = 0;
    assert_false(decodes(&e, copy, e.len + 1));
    assert_true(decodes(&e, e.bytes, e.len));
    assert_true(kir_plan_check(e.bytes, e.len, &e.sg.g, &e.graph, entry_key));
    kir_plan p;
    kir_plan_info info;
    uint64_t object[2], other_key[2] = {entry_key[0], entry_key[1] + 1};
    assert_false(kir_plan_decode(e.bytes, e.len, &e.sg.g, &e.graph, other_key, &p, &info, object));
    assert_false(kir_plan_decode(NULL, 0, &e.sg.g, &e.graph, entry_key, &p, &info, object));
    /* another graph (5 rows instead of 4) under the same key: refused by its bytes */
    small_graph other;
    make_graph(&other, 5);
    kir_bytes other_bytes;
    assert_true(kir_graph_bytes(&other.g, &other_bytes));
    assert_false(kir_plan_decode(e.bytes, e.len, &other.g, &other_bytes, entry_key, &p, &info, object));
    kir_graph_bytes_free(&other_bytes);
    free(copy);
    free_encoded(&e);
}

/* Every 8-byte word of the plan part replaced by hostile values, the
 * checksum made right again: each entry is refused or decodes in range. */
static void hostile_sweep(const encoded *e)
{
    const int64_t hostile[] = {-1, -2, 1, 7, 64, 1 << 20, INT32_MAX, (int64_t)1 << 40, INT64_MAX, INT64_MIN};
    size_t plan_start = 64 + 8 + e->graph.n; /* header, graph length, graph */
    unsigned char *copy = malloc(e->len);
    int accepted = 0, refused = 0;
    for (size_t at = plan_start; at + 8 <= e->len; at += 8) {
        for (size_t h = 0; h < sizeof hostile / sizeof *hostile; h++) {
            memcpy(copy, e->bytes, e->len);
            int64_t was;
            memcpy(&was, copy + at, 8);
            if (was == hostile[h])
                continue;
            memcpy(copy + at, &hostile[h], 8);
            plan_reseal(copy, e->len);
            kir_plan p;
            kir_plan_info info;
            uint64_t object[2];
            if (kir_plan_decode(copy, e->len, &e->sg.g, &e->graph, entry_key, &p, &info, object)) {
                assert_true(plan_in_range(&p, &e->sg.g));
                kir_plan_free(&p);
                accepted++;
            } else {
                refused++;
            }
        }
    }
    assert_true(refused > 0);
    print_message("hostile sealed entries: %d refused, %d accepted (in range)\n", refused, accepted);
    /* a length that claims more than the file holds */
    memcpy(copy, e->bytes, e->len);
    uint64_t glen = UINT64_MAX - 3;
    memcpy(copy + 64, &glen, 8);
    plan_reseal(copy, e->len);
    assert_false(decodes(e, copy, e->len));
    free(copy);
}

static void test_hostile_but_sealed(void **state)
{
    (void)state;
    encoded e;
    encode_small(&e);
    hostile_sweep(&e);
    free_encoded(&e);
}

/* A fused gemm update (fuse_gemm.c) comes back as it went, its unused
 * product buffer included; damaged or hostile, it is refused or in range. */
static void test_fused_update(void **state)
{
    (void)state;
    encoded e;
    encode_fused(&e);
    kir_plan p;
    kir_plan_info info;
    uint64_t object[2];
    assert_true(kir_plan_decode(e.bytes, e.len, &e.sg.g, &e.graph, entry_key, &p, &info, object));
    assert_memory_equal(&info, &e.info, sizeof info);
    assert_int_equal(p.ncalls, 1);
    const kir_call *c = &p.calls[0], *want = &e.plan.calls[0];
    assert_true(want->acc_buf >= 0);
    assert_int_equal(c->acc_buf, want->acc_buf);
    assert_int_equal(c->out[0], want->out[0]);
    assert_int_equal(c->alpha_slot, 0);
    assert_true(c->alpha_negated);
    int unused = 0;
    for (int b = 0; b < p.nb; b++) {
        assert_int_equal(p.b[b].nbytes, e.plan.b[b].nbytes);
        assert_int_equal(p.b[b].donor, e.plan.b[b].donor);
        unused += p.b[b].kind == KB_TMP && p.b[b].nbytes == 0;
    }
    assert_int_equal(unused, 1); /* the product */
    kir_plan_free(&p);
    unsigned char *copy = malloc(e.len);
    for (size_t i = 0; i < e.len; i++) {
        memcpy(copy, e.bytes, e.len);
        copy[i] ^= (unsigned char)(1u << (i % 8));
        assert_false(decodes(&e, copy, e.len));
    }
    free(copy);
    hostile_sweep(&e);
    free_encoded(&e);
}

/* ---- the cache, across processes -------------------------------------------------------------------- */

static char cache_dir[256];

/* The child: one MLP step (matmul, bias, relu, mean, backward, SGD)
 * on the lazy device; prints the loss, a weight and the counters. */
static int child_main(void)
{
    lt_device lazy = lt_device_parse("lazy");
    int64_t sx[] = {8, 5}, sw[] = {5, 3};
    float xv[40], wv[15];
    for (int i = 0; i < 40; i++)
        xv[i] = (float)((i * 7) % 11) / 11.0f - 0.4f;
    for (int i = 0; i < 15; i++)
        wv[i] = (float)((i * 5) % 7) / 7.0f - 0.5f;
    lt_scope_begin();
    lt_tensor *x = lt_from_data(xv, sx, 2, LT_F32, lazy);
    lt_tensor *w = lt_from_data(wv, sw, 2, LT_F32, lazy);
    lt_set_requires_grad(w, true);
    lt_tensor *loss = lt_mean(lt_relu(lt_add_scalar(lt_matmul(x, w), 0.1)), NULL, 0, false);
    lt_backward(loss, NULL);
    lt_tensor *w2 = lt_sub(w, lt_mul_scalar(lt_grad(w), 0.5));
    lt_mark_step();
    double l = 0, first = 0;
    lt_status st = lt_item(loss, &l);
    if (st == LT_OK)
        st = lt_item(lt_select(lt_select(w2, 0, 1), 0, 2), &first);
    printf("loss=%.17g w=%.17g status=%d\n", l, first, (int)st);
    lt_scope_end();
    const char *names[] = {"PlanCacheHit", "PlanCacheMiss", "PlanCacheCorrupt", "PlanCacheStores", "DiskCacheMiss"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        printf("%s=%lld\n", names[i], (long long)lt_metrics_counter(names[i]));
    return 0;
}

typedef struct child_out {
    char text[4096];
    double loss, w;
} child_out;

static long long counter(const child_out *o, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "%s=", name);
    const char *p = strstr(o->text, key);
    assert_non_null(p);
    return atoll(p + strlen(key));
}

static void run_child(child_out *o)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        setenv("LT_TEST_CHILD", "1", 1);
        setenv("LT_CACHE_DIR", cache_dir, 1);
        setenv("LT_BACKEND", "cpu", 1);
        unsetenv("LT_DUMP_KERNELS");
        execl("/proc/self/exe", "test_plan_cache", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t got;
    while ((got = read(fds[0], o->text + n, sizeof o->text - 1 - n)) > 0)
        n += (size_t)got;
    o->text[n] = '\0';
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const char *p = strstr(o->text, "loss=");
    assert_non_null(p);
    assert_int_equal(sscanf(p, "loss=%lf w=%lf", &o->loss, &o->w), 2);
    assert_int_equal(atoi(strstr(o->text, "status=") + 7), 0);
}

/* Applies fn (if not NULL) to every file of the cache whose name ends
 * with suffix; returns how many there are. */
static int for_each_file(const char *suffix, void (*fn)(const char *path))
{
    DIR *d = opendir(cache_dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name), sl = strlen(suffix);
        if (e->d_name[0] != '.' && len > sl && strcmp(e->d_name + len - sl, suffix) == 0) {
            char path[600];
            snprintf(path, sizeof path, "%s/%s", cache_dir, e->d_name);
            if (fn)
                fn(path);
            n++;
        }
    }
    closedir(d);
    return n;
}

static void flip_middle(const char *path)
{
    int fd = open(path, O_RDWR);
    struct stat st;
    assert_true(fd >= 0 && fstat(fd, &st) == 0);
    unsigned char c;
    off_t at = st.st_size / 2;
    assert_int_equal(pread(fd, &c, 1, at), 1);
    c ^= 0x10;
    assert_int_equal(pwrite(fd, &c, 1, at), 1);
    close(fd);
}

static void cut_in_half(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(truncate(path, st.st_size / 2), 0);
}

static void remove_file(const char *path) { assert_int_equal(unlink(path), 0); }

static void test_across_processes(void **state)
{
    (void)state;
    snprintf(cache_dir, sizeof cache_dir, "/tmp/lt-plan-cache-XXXXXX");
    assert_non_null(mkdtemp(cache_dir));
    child_out cold, warm, damaged, cut, evicted;
    run_child(&cold);
    assert_true(counter(&cold, "PlanCacheStores") >= 1);
    assert_int_equal(counter(&cold, "PlanCacheHit"), 0);
    assert_true(for_each_file(".plan", NULL) >= 1);
    run_child(&warm);
    assert_true(counter(&warm, "PlanCacheHit") >= 1);
    assert_int_equal(counter(&warm, "PlanCacheMiss"), 0);
    assert_int_equal(counter(&warm, "DiskCacheMiss"), 0);
    assert_int_equal(counter(&warm, "PlanCacheStores"), 0);
    assert_true(warm.loss == cold.loss && warm.w == cold.w);

    assert_true(for_each_file(".plan", flip_middle) >= 1);
    run_child(&damaged);
    assert_true(counter(&damaged, "PlanCacheCorrupt") >= 1);
    assert_true(counter(&damaged, "PlanCacheStores") >= 1); /* rebuilt */
    assert_int_equal(counter(&damaged, "DiskCacheMiss"), 0); /* objects found by their source */
    assert_true(damaged.loss == cold.loss && damaged.w == cold.w);

    assert_true(for_each_file(".plan", cut_in_half) >= 1);
    run_child(&cut);
    assert_true(counter(&cut, "PlanCacheCorrupt") >= 1);
    assert_true(cut.loss == cold.loss && cut.w == cold.w);

    assert_true(for_each_file(".so", remove_file) >= 1);
    run_child(&evicted);
    assert_true(counter(&evicted, "DiskCacheMiss") >= 1); /* compiled again */
    assert_true(evicted.loss == cold.loss && evicted.w == cold.w);

    for_each_file("", remove_file);
    rmdir(cache_dir);
}

int main(void)
{
    if (getenv("LT_TEST_CHILD"))
        return child_main();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, lt_test_setup, lt_test_teardown),
        cmocka_unit_test_setup_teardown(test_damage_refused, lt_test_setup, lt_test_teardown),
        cmocka_unit_test_setup_teardown(test_hostile_but_sealed, lt_test_setup, lt_test_teardown),
        cmocka_unit_test_setup_teardown(test_fused_update, lt_test_setup, lt_test_teardown),
        cmocka_unit_test_setup_teardown(test_across_processes, lt_test_setup, lt_test_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
