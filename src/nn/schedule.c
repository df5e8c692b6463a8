/*
 * schedule.c - learning-rate schedules: pure functions of the 0-based step.
 *
 *   step decay: base * gamma^floor(step / step_size)
 *   cosine:     min + (base - min) * (1 + cos(pi * min(step, total) / total)) / 2
 *               (base at step 0, min from step `total` on)
 *   warmup:     after * min(1, (step + 1) / warmup_steps)
 *               (after / warmup_steps at step 0, reaching `after` at step
 *               warmup_steps - 1; warmup_steps == 0 means no warmup)
 *
 * Invalid arguments give NAN with an LT_ERR_ARGUMENT error.
 */
#include "core/core.h"

#include <math.h>

static double bad(const char *op, const char *what, long long v, const char *expected)
{
    lt_error(LT_ERR_ARGUMENT, "%s: %s is %lld, expected %s", op, what, v, expected);
    return NAN;
}

double lt_lr_step_decay(double base, int64_t step, int64_t step_size, double gamma)
{
    if (step < 0)
        return bad("lr_step_decay", "step", (long long)step, ">= 0");
    if (step_size < 1)
        return bad("lr_step_decay", "step_size", (long long)step_size, ">= 1");
    return base * pow(gamma, (double)(step / step_size));
}

double lt_lr_cosine(double base, int64_t step, int64_t total_steps, double min_lr)
{
    if (step < 0)
        return bad("lr_cosine", "step", (long long)step, ">= 0");
    if (total_steps < 1)
        return bad("lr_cosine", "total_steps", (long long)total_steps, ">= 1");
    double progress = (double)(step < total_steps ? step : total_steps) / (double)total_steps;
    return min_lr + (base - min_lr) * (1.0 + cos(M_PI * progress)) / 2.0;
}

double lt_lr_warmup(double after, int64_t step, int64_t warmup_steps)
{
    if (step < 0)
        return bad("lr_warmup", "step", (long long)step, ">= 0");
    if (warmup_steps < 0)
        return bad("lr_warmup", "warmup_steps", (long long)warmup_steps, ">= 0");
    if (step >= warmup_steps)
        return after;
    return after * (double)(step + 1) / (double)warmup_steps;
}
