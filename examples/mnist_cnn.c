/*
 * mnist_cnn.c - PyTorch's MNIST example network (two 3x3 convolutions, max
 * pooling, dropout, two linear layers) trained on Fashion-MNIST with
 * log_softmax + nll_loss, Adam 1e-3, batch 64.
 *
 *   build/examples/mnist_cnn [--steps 300] [--device lazy|cpu] [--log-every 20]
 *                            [--data /usr/share/datasets/fashion-mnist]
 */
#include "example_util.h"

#include <lazytensor.h>
#include <stdio.h>

/* [N, 1, 28, 28] -> conv 32 -> 26x26 -> conv 64 -> 24x24 -> pool -> 64*12*12 = 9216 */
static lt_module *mnist_net(lt_device dev)
{
    lt_module *layers[] = {lt_nn_conv2d(1, 32, 3, 1, 0, 1, true, dev),
                           lt_nn_relu(),
                           lt_nn_conv2d(32, 64, 3, 1, 0, 1, true, dev),
                           lt_nn_relu(),
                           lt_nn_max_pool2d(2),
                           lt_nn_dropout(0.25),
                           lt_nn_flatten(),
                           lt_nn_linear(9216, 128, true, dev),
                           lt_nn_relu(),
                           lt_nn_dropout(0.5),
                           lt_nn_linear(128, 10, true, dev)};
    return lt_nn_sequential(layers, 11);
}

int main(int argc, char **argv)
{
    example_args args = {300, 20, lt_device_parse("lazy"), EXAMPLE_FASHION_DIR};
    if (!example_parse_args(argc, argv, "--data", &args))
        return 2;
    example_fashion data;
    if (example_fashion_load(&data, args.path) != LT_OK) {
        fprintf(stderr, "mnist_cnn: %s\n", lt_last_error());
        return 1;
    }
    lt_manual_seed(1); /* initialization and dropout masks */
    lt_module *model = mnist_net(args.dev);
    lt_optimizer *opt = example_adam(&model, 1, 0);
    bool ok = opt != NULL;
    for (int step = 1; ok && step <= args.steps; step++) {
        lt_step_begin();
        lt_tensor *images, *labels;
        lt_tensor *loss = NULL;
        if (example_fashion_batch(&data, step - 1, 64, args.dev, &images, &labels))
            loss = lt_nll_loss(lt_log_softmax(lt_module_forward(model, images), 1), labels);
        ok = example_end_step(loss, opt, step, &args);
    }
    if (!ok)
        fprintf(stderr, "mnist_cnn: %s\n", lt_last_error());
    lt_optim_free(opt);
    lt_module_free(model);
    example_fashion_free(&data);
    return ok ? 0 : 1;
}
