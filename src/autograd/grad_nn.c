/* grad_nn.c - gradient formulas of the nn op group. */
#include "autograd/autograd.h"

void lt_grad_register_nn(void) {}
