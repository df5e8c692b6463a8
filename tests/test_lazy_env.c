/* test_lazy_env.c - LT_DEBUG prints why each sync happened (and why each
 * cache miss compiled), LT_IR_DUMP appends every synced graph to a file.
 * Both are read from the environment, so this program sets them before its
 * first sync. */
#include "lt_test.h"

#include <unistd.h>

static char dump_path[256], log_path[256];

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_debug_and_dump(void **state)
{
    (void)state;
    lt_device lazy = lt_device_parse("lazy");
    lt_tensor *x = LT_OK_T(lt_to(LT_T(LT_F32, LT_DIMS(4), 1, 2, 3, 4), lazy));
    double v;
    fflush(stderr);
    assert_int_equal(lt_item(lt_sum(lt_mul(x, x), NULL, 0, false), &v), LT_OK);
    assert_true(v == 30);
    lt_add_scalar_(x, 1);
    assert_int_equal(lt_mark_step(), LT_OK);
    lt_add_scalar_(x, 1);
    assert_int_equal(lt_mark_step(), LT_OK); /* same graph: a cache hit */
    fflush(stderr);
    const char *log = slurp(log_path);
    assert_non_null(log);
    assert_non_null(strstr(log, "lazytensor: sync forced by lt_item: "));
    assert_non_null(strstr(log, "cache miss (compiling)\nlazytensor:   compiled because: the first graph compiled"));
    /* the step's graph is explained against the read's */
    assert_non_null(strstr(log, "compiled because: different ops: at "));
    assert_non_null(strstr(log, "sync forced by lt_mark_step"));
    assert_non_null(strstr(log, "cache hit"));
    const char *dump = slurp(dump_path);
    assert_non_null(dump);
    assert_non_null(strstr(dump, "# sync forced by lt_item\nIR {\n"));
    assert_non_null(strstr(dump, "mul(%0, %0)"));
    assert_non_null(strstr(dump, "# sync forced by lt_mark_step\nIR {\n"));
}

int main(void)
{
    char dir[] = "/tmp/lt_env_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    snprintf(dump_path, sizeof dump_path, "%s/ir.txt", dir);
    snprintf(log_path, sizeof log_path, "%s/stderr.txt", dir);
    setenv("LT_IR_DUMP", dump_path, 1);
    setenv("LT_DEBUG", "1", 1);
    int saved = dup(STDERR_FILENO);
    if (!freopen(log_path, "w", stderr))
        return 1;
    const struct CMUnitTest tests[] = {LT_TEST(test_debug_and_dump)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    if (rc != 0) { /* failure messages went to the captured stderr: show them */
        const char *log = slurp(log_path);
        fprintf(stderr, "%s\n(kept %s)\n", log ? log : "", dir);
        return rc;
    }
    unlink(dump_path);
    unlink(log_path);
    rmdir(dir);
    return rc;
}
