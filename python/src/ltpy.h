/*
 * ltpy.h - shared declarations of the CPython extension lazytensor._C.
 *
 * The extension is a client of include/lazytensor.h like any other: it
 * sees no internal header. Ownership: every Python Tensor owns exactly one
 * caller-owned C reference (released in tp_dealloc). The extension never
 * opens a scope, so every C result is caller-owned; temporaries made while
 * binding a call (a Python scalar wrapped as a 0-dim tensor, an index
 * tensor) are released before the call returns.
 */
#ifndef LTPY_H
#define LTPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "lazytensor.h"

/* ---- Tensor ------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    lt_tensor *t; /* one caller-owned reference; NULL only while being built */
} LtTensor;

extern PyTypeObject LtTensor_Type;
/* The class results are made of: lazytensor.Tensor once the package has
 * registered it (a Python subclass of LtTensor_Type), else the base type. */
extern PyTypeObject *ltpy_tensor_class;

#define LTPY_TENSOR(o) (((LtTensor *)(o))->t)
static inline int ltpy_is_tensor(PyObject *o) { return PyObject_TypeCheck(o, &LtTensor_Type); }

/* Wraps a caller-owned reference into a new Python Tensor (taking it over).
 * t == NULL raises the pending C error and returns NULL. */
PyObject *ltpy_wrap(lt_tensor *t);
/* The C tensor of a Python Tensor argument (borrowed), or NULL with a
 * TypeError naming `what`. */
lt_tensor *ltpy_tensor_arg(PyObject *o, const char *what);
/* The handles of a sequence of tensors (borrowed: the sequence keeps them),
 * in a PyMem array for the caller to free; NULL with an exception. */
lt_tensor **ltpy_tensor_list(PyObject *seq, int *n);

/* ---- errors ------------------------------------------------------------- */

/* Raises the pending C error as a Python exception chosen by its status
 * (TypeError, ValueError, IndexError, MemoryError, OSError or
 * RuntimeError) carrying lt_last_error(), clears it, returns NULL. */
PyObject *ltpy_raise(void);
/* LT_OK -> 0; otherwise raises as ltpy_raise and returns -1. */
int ltpy_check(lt_status st);

/* ---- dtypes, devices, shapes --------------------------------------------- */

extern PyTypeObject LtDType_Type;
extern PyTypeObject LtDevice_Type;
/* The lazytensor.<dtype> singleton (new reference). */
PyObject *ltpy_dtype_object(lt_dtype dt);
/* A lazytensor.device object (new reference). */
PyObject *ltpy_device_object(lt_device d);
/* Parses a dtype object or its name ("float32", "f32"); None gives dflt.
 * Returns 0, or -1 with TypeError. */
int ltpy_parse_dtype(PyObject *o, lt_dtype dflt, lt_dtype *out);
/* Parses a device object or string; None gives the cpu. 0 or -1. */
int ltpy_parse_device(PyObject *o, lt_device *out);
/* A sequence of ints (or one int) into dims; 0 or -1 with an exception. */
int ltpy_parse_shape(PyObject *o, int64_t *dims, int *ndim);
/* A tuple of the tensor's sizes (new reference). */
PyObject *ltpy_shape_tuple(lt_tensor *t);

/* ---- operands ------------------------------------------------------------ */

/* True for Python bool, int and float (and numpy scalars that convert). */
int ltpy_is_scalar(PyObject *o);
/*
 * A 0-dim tensor holding Python scalar s, with the dtype PyTorch gives a
 * Python scalar next to tensor `like` (a float keeps a floating tensor's
 * dtype and is f32 next to an integer one; an int keeps an integer or
 * floating tensor's dtype and is i64 next to bool; a bool takes like's
 * dtype), on like's device. Caller-owned; NULL with an exception.
 */
lt_tensor *ltpy_scalar_tensor(PyObject *s, lt_tensor *like);
/* Operand o as a tensor: a Tensor's handle with one new reference, or a
 * wrapped scalar next to `like` (caller-owned either way). NULL with
 * TypeError (or the C error) for anything else. */
lt_tensor *ltpy_operand(PyObject *o, lt_tensor *like);

/* ---- parts of the type, in their own files ------------------------------- */

extern PyNumberMethods ltpy_tensor_as_number;
extern PyMappingMethods ltpy_tensor_as_mapping;
extern PyBufferProcs ltpy_tensor_as_buffer;
extern PyMethodDef ltpy_tensor_methods[]; /* methods.c */
extern PyGetSetDef ltpy_tensor_getset[];
PyObject *ltpy_tensor_richcompare(PyObject *a, PyObject *b, int op);

/* convert.c */
PyObject *ltpy_tensor_from_data(PyObject *self, PyObject *args);   /* _C.tensor(data, dtype, device) */
PyObject *ltpy_from_numpy(PyObject *self, PyObject *arr);          /* zero-copy */
PyObject *ltpy_tolist(PyObject *self, PyObject *unused);
PyObject *ltpy_to_dlpack(PyObject *self, PyObject *args, PyObject *kw);
PyObject *ltpy_from_dlpack_capsule(PyObject *self, PyObject *capsule);

/* functions.c, nn.c: the module-level functions */
extern PyMethodDef ltpy_functions[];
extern PyMethodDef ltpy_nn_functions[];
int ltpy_nn_init(PyObject *module);
/* nn.c: C layers and optimizers as Python objects (taking the pointer over;
 * NULL raises the C error) and back (borrowed, NULL with TypeError). */
PyObject *ltpy_wrap_module(lt_module *m);
PyObject *ltpy_wrap_optimizer(lt_optimizer *o);
lt_module *ltpy_module_arg(PyObject *o);
lt_optimizer *ltpy_optimizer_arg(PyObject *o);
/* ops.c: every op of the C registry as a function of module and, taking a
 * tensor first, a method of Tensor. */
int ltpy_ops_init(PyObject *module);

#endif
