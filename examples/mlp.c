/*
 * mlp.c - a multilayer perceptron (784-512-512-10, ReLU) learns to classify
 * Fashion-MNIST clothing images, Adam 1e-3, batch 128, cross entropy.
 *
 *   build/examples/mlp [--steps 468] [--device lazy|cpu] [--log-every 50]
 *                      [--data /usr/share/datasets/fashion-mnist]
 *
 * On the lazy device each step is traced and run as one compiled program.
 */
#include "example_util.h"

#include <lazytensor.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    example_args args = {468, 50, lt_device_parse("lazy"), EXAMPLE_FASHION_DIR}; /* 468 steps: one epoch */
    if (!example_parse_args(argc, argv, "--data", &args))
        return 2;
    example_fashion data;
    if (example_fashion_load(&data, args.path) != LT_OK) {
        fprintf(stderr, "mlp: %s\n", lt_last_error());
        return 1;
    }
    lt_manual_seed(1);
    lt_module *layers[] = {lt_nn_flatten(),
                           lt_nn_linear(784, 512, true, args.dev), lt_nn_relu(),
                           lt_nn_linear(512, 512, true, args.dev), lt_nn_relu(),
                           lt_nn_linear(512, 10, true, args.dev)};
    lt_module *model = lt_nn_sequential(layers, 6);
    lt_optimizer *opt = example_adam(&model, 1, 0);
    bool ok = opt != NULL;
    for (int step = 1; ok && step <= args.steps; step++) {
        lt_step_begin(); /* everything the step makes is dropped at its end */
        lt_tensor *images, *labels;
        lt_tensor *loss = NULL;
        if (example_fashion_batch(&data, step - 1, 128, args.dev, &images, &labels))
            loss = lt_cross_entropy(lt_module_forward(model, images), labels, 0);
        ok = example_end_step(loss, opt, step, &args);
    }
    if (!ok)
        fprintf(stderr, "mlp: %s\n", lt_last_error());
    lt_optim_free(opt);
    lt_module_free(model);
    example_fashion_free(&data);
    return ok ? 0 : 1;
}
