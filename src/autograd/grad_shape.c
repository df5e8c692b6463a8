/* grad_shape.c - gradient formulas of the shape op group. */
#include "autograd/autograd.h"

void lt_grad_register_shape(void) {}
