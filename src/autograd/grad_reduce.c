/* grad_reduce.c - gradient formulas of the reduce op group. */
#include "autograd/autograd.h"

void lt_grad_register_reduce(void) {}
