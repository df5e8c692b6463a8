/*
 * units.c - how a large program's kernel functions are cut into
 * translation units, and how hard the C compiler optimizes each.
 *
 * Compile time is the first step's latency; run time is every step's. So
 * each kernel function gets the optimization its run time can repay:
 *   cold  less than COLD_WORK operations per run (tiny tensors, however
 *         long the chain): LT_CFLAGS_COLD (-O0);
 *   hot   the functions that do the most work per unit of compile cost,
 *         up to a budget of HOT_COST_SHARE of the program's compile cost:
 *         LT_CFLAGS (-O3);
 *   warm  the rest: LT_CFLAGS_WARM after LT_CFLAGS, by default -O2 with
 *         -O3's vectorizer cost model (compiler.h): about 20% less
 *         compiler CPU than -O3 for the GPT step, with generated code as
 *         fast. "-O1 -ftree-vectorize" trades more step time for a faster
 *         first compile.
 * A program small enough for one unit (UNIT_COST) is compiled whole with
 * LT_CFLAGS (cold flags only when every kernel is cold): the tiers pay only
 * where the program is large. Each tier is cut into units of about equal
 * cost, which compiler processes build in parallel (cc.c).
 */
#include "compiler/kir.h"

#include <stdlib.h>
#include <string.h>

/* Operations per run below which a kernel function is cold: even
 * unoptimized it takes some tens of microseconds per run, so optimizing
 * it costs more compile time than it can save. A chain of 10,000 ops on
 * 4 elements is all cold: 2.1 s of compiler CPU instead of 4.0 s at -O1,
 * for 0.39 instead of 0.15 ms per run (bench/compile_scaling). */
#define COLD_WORK 16384.0
/* The share of a large program's compile cost that may go to hot
 * functions (compiled at -O3), one in HOT_COST_SHARE. */
#define HOT_COST_SHARE 4

typedef struct by_density {
    int fn;
    double density; /* work per unit of compile cost */
} by_density;

static int denser_first(const void *a, const void *b)
{
    double x = ((const by_density *)a)->density, y = ((const by_density *)b)->density;
    return (x < y) - (x > y);
}

/* Marks the densest non-cold functions hot while their cost fits the
 * budget; work[] is per function (summed over the kernels sharing it). */
static bool pick_hot(int nk, const double *work, const size_t *cost, lt_cc_tier *tier)
{
    by_density *order = malloc(sizeof *order * (size_t)(nk > 0 ? nk : 1));
    if (!order)
        return false;
    int n = 0;
    size_t total = 0;
    for (int j = 0; j < nk; j++) {
        if (cost[j] == 0 || tier[j] == LT_CC_COLD)
            continue;
        order[n++] = (by_density){j, work[j] / (double)cost[j]};
        total += cost[j];
    }
    qsort(order, (size_t)n, sizeof *order, denser_first);
    size_t budget = total / HOT_COST_SHARE, used = 0;
    for (int i = 0; i < n; i++) {
        int j = order[i].fn;
        if (used + cost[j] <= budget) {
            tier[j] = LT_CC_HOT;
            used += cost[j];
        }
    }
    free(order);
    return true;
}

bool kir_assign_tiers(int nk, const double *kernel_work, const size_t *cost, const int *rep, lt_cc_tier *tier)
{
    double *work = calloc((size_t)(nk > 0 ? nk : 1), sizeof *work);
    if (!work)
        return false;
    size_t total = 0;
    for (int j = 0; j < nk; j++) {
        if (rep[j] >= 0)
            work[rep[j]] += kernel_work[j];
        total += cost[j];
    }
    for (int j = 0; j < nk; j++)
        tier[j] = work[j] < COLD_WORK ? LT_CC_COLD : total <= KIR_UNIT_COST ? LT_CC_HOT : LT_CC_WARM;
    bool ok = total <= KIR_UNIT_COST || pick_hot(nk, work, cost, tier);
    free(work);
    return ok;
}

/* A tier too small for a process of its own joins the next hotter one
 * (cold into warm, warm into hot), or the next cooler one for hot. */
static void merge_small_tiers(int nk, size_t *total, lt_cc_tier *tier)
{
    static const lt_cc_tier into[LT_CC_TIERS] = {LT_CC_WARM, LT_CC_HOT, LT_CC_WARM};
    for (int cls = LT_CC_TIERS - 1; cls >= 0; cls--) {
        if (total[cls] == 0 || total[cls] >= KIR_UNIT_COST / 4)
            continue;
        lt_cc_tier to = into[cls];
        if (cls == LT_CC_HOT && total[LT_CC_WARM] == 0)
            continue; /* nothing to join */
        for (int j = 0; j < nk; j++)
            if (tier[j] == (lt_cc_tier)cls)
                tier[j] = to;
        total[to] += total[cls];
        total[cls] = 0;
    }
}

/* Units per tier: ceil(cost / unit cost), LT_CC_MAX_UNITS in all. Hot
 * units are half as large: -O3 takes about twice as long per byte as the
 * warm tier's flags, and units of about equal compile time keep the
 * compiler processes busy until the end. */
static void count_units(const size_t *total, int *n)
{
    static const size_t unit_cost[LT_CC_TIERS] = {KIR_UNIT_COST / 2, KIR_UNIT_COST, KIR_UNIT_COST};
    int sum = 0;
    for (int cls = 0; cls < LT_CC_TIERS; cls++)
        sum += n[cls] = (int)((total[cls] + unit_cost[cls] - 1) / unit_cost[cls]);
    while (sum > LT_CC_MAX_UNITS) {
        int big = 0;
        for (int cls = 1; cls < LT_CC_TIERS; cls++)
            if (n[cls] > n[big])
                big = cls;
        n[big]--;
        sum--;
    }
}

int kir_plan_units(int nk, const size_t *cost, lt_cc_tier *tier, int *unit, lt_cc_unit *units)
{
    size_t total[LT_CC_TIERS] = {0, 0, 0};
    for (int j = 0; j < nk; j++)
        total[tier[j]] += cost[j];
    memset(units, 0, sizeof *units * LT_CC_MAX_UNITS);
    if (total[LT_CC_HOT] + total[LT_CC_WARM] + total[LT_CC_COLD] <= KIR_UNIT_COST) {
        bool all_cold = total[LT_CC_COLD] > 0 && total[LT_CC_HOT] + total[LT_CC_WARM] == 0;
        units[0].tier = all_cold ? LT_CC_COLD : LT_CC_HOT;
        for (int j = 0; j < nk; j++)
            unit[j] = cost[j] ? 0 : -1;
        return 1;
    }
    merge_small_tiers(nk, total, tier);
    int n[LT_CC_TIERS], first[LT_CC_TIERS];
    count_units(total, n);
    first[0] = 0;
    for (int cls = 1; cls < LT_CC_TIERS; cls++)
        first[cls] = first[cls - 1] + n[cls - 1];
    size_t done[LT_CC_TIERS] = {0, 0, 0};
    for (int j = 0; j < nk; j++) {
        int cls = tier[j];
        if (cost[j] == 0) { /* no function of its own */
            unit[j] = -1;
            continue;
        }
        /* the unit whose share of the tier's cost holds this function's middle */
        size_t middle = done[cls] + cost[j] / 2;
        int u = (int)((double)middle * n[cls] / (double)(total[cls] ? total[cls] : 1));
        unit[j] = first[cls] + (u < n[cls] ? u : n[cls] - 1);
        done[cls] += cost[j];
    }
    for (int cls = 0; cls < LT_CC_TIERS; cls++)
        for (int u = first[cls]; u < first[cls] + n[cls]; u++)
            units[u].tier = (lt_cc_tier)cls;
    return first[LT_CC_TIERS - 1] + n[LT_CC_TIERS - 1];
}
