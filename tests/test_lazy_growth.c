/* test_lazy_growth.c - a lazy graph that grows without a barrier: one
 * warning past the threshold (LT_GRAPH_WARN_NODES), naming the call that
 * records; with the automatic barrier (LT_AUTO_BARRIER=1) the graph stays
 * near the threshold and the results are those of the cpu device; a
 * failing automatic barrier changes nothing, lets recording go on and is
 * not retried after every op. The thresholds are set through
 * lt_lazy_set_growth_limit (white box), as the environment would. */
#include "lt_test.h"

#include "lazy/lazy.h"

#include <unistd.h>

static char log_path[256];

/* The bytes written to the captured stderr since `from`. */
static char *log_since(long from)
{
    fflush(stderr);
    FILE *f = fopen(log_path, "r");
    if (!f)
        return NULL;
    static char buf[65536];
    fseek(f, from, SEEK_SET);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static long log_size(void)
{
    fflush(stderr);
    return ftell(stderr);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

/* x <- x * 1.0001 + 0.5, `steps` times, with a small matmul every 50 ops;
 * returns x (values of 4 elements). After every op, the IR recorded since
 * the last barrier is at most max_nodes (0: unchecked). */
static lt_tensor *chain(lt_device dev, int steps, uint32_t max_nodes)
{
    lt_tensor *x = lt_to(LT_T(LT_F32, LT_DIMS(1, 4), 1, -2, 3, 0.25), dev);
    lt_tensor *m = lt_to(LT_T(LT_F32, LT_DIMS(4, 4), 0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.5), dev);
    for (int i = 0; i < steps && x; i++) {
        lt_scope_begin();
        lt_tensor *y = lt_add_scalar(lt_mul_scalar(x, 1.0001), 0.5);
        if (i % 50 == 49)
            y = lt_matmul(y, m);
        x = lt_keep(y);
        lt_scope_end();
        if (max_nodes && dev.kind == LT_DEVICE_LAZY && lt_ir_node_count() > max_nodes) {
            print_error("step %d: %u IR nodes pending, more than %u\n", i, lt_ir_node_count(), max_nodes);
            fail();
        }
    }
    return x;
}

static void test_warns_once(void **state)
{
    (void)state;
    lt_lazy_set_growth_limit(300, false);
    lt_metrics_reset();
    long from = log_size();
    lt_tensor *x = LT_OK_T(chain(lt_device_parse("lazy"), 400, 0));
    const char *log = log_since(from);
    assert_non_null(log);
    assert_int_equal(count(log, "IR nodes recorded on the lazy device without a barrier"), 1);
    /* direct calls are named by their op (mul for lt_mul_scalar) */
    assert_true(strstr(log, "(the latest by mul)") || strstr(log, "(the latest by add)") ||
                strstr(log, "(the latest by matmul)"));
    assert_non_null(strstr(log, "LT_AUTO_BARRIER=1"));
    assert_int_equal(lt_metrics_counter("GraphSizeWarnings"), 1);
    assert_int_equal(lt_metrics_counter("AutoBarriers"), 0);
    assert_true(lt_ir_node_count() > 300); /* warned, not cut */
    double *want = lt_test_values(LT_OK_T(chain(lt_device_cpu(), 400, 0)));
    LT_ASSERT_ARRAY(x, want, 4, 1e-6);
    free(want);
}

static void test_auto_barrier_bounds_graph(void **state)
{
    (void)state;
    lt_lazy_set_growth_limit(300, true);
    lt_metrics_reset();
    long from = log_size();
    /* each op adds at most a handful of nodes (op, scalar, leaves) */
    lt_tensor *x = LT_OK_T(chain(lt_device_parse("lazy"), 2000, 300 + 8));
    const char *log = log_since(from);
    assert_int_equal(count(log, "IR nodes recorded on the lazy device without a barrier"), 1);
    assert_non_null(strstr(log, "cutting the graph here with a barrier"));
    assert_true(lt_metrics_counter("AutoBarriers") >= 10);
    double *want = lt_test_values(LT_OK_T(chain(lt_device_cpu(), 2000, 0)));
    LT_ASSERT_ARRAY(x, want, 4, 1e-5);
    free(want);
    lt_lazy_set_growth_limit(0, false);
}

/* A pending gather with an index out of range: the automatic barrier fails
 * and changes nothing; recording goes on; it is retried only once the graph
 * has doubled; the step barrier reports the error, and after
 * lt_lazy_discard the device works again. */
static void test_failing_auto_barrier(void **state)
{
    (void)state;
    lt_device lazy = lt_device_parse("lazy");
    lt_lazy_set_growth_limit(200, true);
    lt_metrics_reset();
    lt_tensor *table = LT_OK_T(lt_to(LT_T(LT_F32, LT_DIMS(3), 1, 2, 3), lazy));
    lt_tensor *bad = LT_OK_T(lt_to(LT_T(LT_I64, LT_DIMS(1), 7), lazy));
    lt_tensor *g = LT_OK_T(lt_gather(table, 0, bad));
    lt_tensor *x = LT_OK_T(chain(lazy, 1000, 0));
    int64_t tries = lt_metrics_counter("AutoBarriers");
    assert_true(tries >= 1 && tries <= 6); /* 200, 400, 800, ... nodes */
    assert_int_equal(lt_mark_step(), LT_ERR_INDEX);
    LT_EXPECT_ERROR(LT_ERR_INDEX, "gather");
    lt_lazy_discard();
    lt_release(g);
    lt_release(x);
    lt_lazy_set_growth_limit(200, false);
    lt_tensor *y = LT_OK_T(lt_mul_scalar(table, 2));
    LT_ASSERT_VALUES(y, 0, 2, 4, 6);
    lt_lazy_set_growth_limit(0, false);
}

int main(void)
{
    char dir[] = "/tmp/lt_growth_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    snprintf(log_path, sizeof log_path, "%s/stderr.txt", dir);
    int saved = dup(STDERR_FILENO);
    if (!freopen(log_path, "w", stderr))
        return 1;
    const struct CMUnitTest tests[] = {
        LT_TEST(test_warns_once),
        LT_TEST(test_auto_barrier_bounds_graph),
        LT_TEST(test_failing_auto_barrier),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    const char *log = log_since(0);
    if (rc != 0) /* failure messages went to the captured stderr: show them */
        fprintf(stderr, "%s\n", log ? log : "");
    unlink(log_path);
    rmdir(dir);
    return rc;
}
