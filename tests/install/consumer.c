/*
 * consumer.c - a program built against an installed lazytensor
 * (tests/install.sh builds it with pkg-config and with find_package).
 * It computes the README's example on the cpu device and on the lazy
 * device with the compiling backend, so the installed library runs the C
 * compiler at run time, and prints what it got.
 */
#include <lazytensor.h>

#include <stdio.h>

/* sum over rows of relu(x*x - 4), x = [[0, 1, 2], [3, 4, 5]]: [0, 38] */
static lt_status row_sums(const char *device, float out[2])
{
    lt_scope_begin();
    int64_t dims[2] = {2, 3};
    lt_tensor *x = lt_view(lt_arange(0, 6, 1, LT_F32, lt_device_parse(device)), dims, 2);
    lt_tensor *y = lt_sum(lt_relu(lt_add_scalar(lt_mul(x, x), -4.0)), (int[]){1}, 1, false);
    lt_status st = lt_copy_to_host(y, out, 2 * sizeof *out);
    lt_scope_end();
    return st;
}

int main(void)
{
    printf("lazytensor %s\n", lt_version());
    if (lt_lazy_set_backend("cpu") != LT_OK) { /* every new graph waits for cc */
        fprintf(stderr, "consumer: %s\n", lt_last_error());
        return 1;
    }
    const char *devices[] = {"cpu", "lazy"};
    for (int i = 0; i < 2; i++) {
        float v[2];
        if (row_sums(devices[i], v) != LT_OK) {
            fprintf(stderr, "consumer: %s: %s\n", devices[i], lt_last_error());
            return 1;
        }
        printf("%s: %g %g\n", devices[i], v[0], v[1]);
    }
    printf("lazy backend %s, programs compiled by cc: %lld\n", lt_lazy_backend(),
           (long long)lt_metrics_counter("DiskCacheMiss"));
    return 0;
}
