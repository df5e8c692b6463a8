/* test_dlpack.c - lt_to_dlpack and lt_from_dlpack: the DLPack fields of
 * an export (data pointer, shape, strides, dtype), memory shared both ways,
 * an export outliving its tensor, the producer's deleter called once when
 * the last tensor on an import dies, a round trip, and the refusals. */
#include "lt_test.h"

static int deletes;
static void count_delete(lt_dl_managed_tensor *m)
{
    (void)m;
    deletes++;
}

static void test_export_fields_and_sharing(void **state)
{
    (void)state;
    lt_tensor *t = LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6);
    lt_tensor *tt = LT_OK_T(lt_transpose(t, 0, 1)); /* [3, 2], strides (1, 3) */
    lt_dl_managed_tensor *m = lt_to_dlpack(tt);
    assert_non_null(m);
    lt_dl_tensor *d = &m->dl_tensor;
    assert_ptr_equal(d->data, lt_tensor_data(t));
    assert_int_equal(d->device.device_type, LT_DL_CPU);
    assert_int_equal(d->ndim, 2);
    assert_int_equal(d->shape[0], 3);
    assert_int_equal(d->shape[1], 2);
    assert_int_equal(d->strides[0], 1);
    assert_int_equal(d->strides[1], 3);
    assert_int_equal(d->dtype.code, LT_DL_FLOAT);
    assert_int_equal(d->dtype.bits, 32);
    assert_int_equal(d->dtype.lanes, 1);
    ((float *)d->data)[4] = 50; /* t[1][1]: the consumer's writes reach the tensor */
    LT_ASSERT_VALUES(t, 0, 1, 2, 3, 4, 50, 6);
    lt_tensor *i = LT_T(LT_I64, LT_DIMS(1), 7);
    lt_dl_managed_tensor *mi = lt_to_dlpack(i);
    assert_int_equal(mi->dl_tensor.dtype.code, LT_DL_INT);
    assert_int_equal(mi->dl_tensor.dtype.bits, 64);
    mi->deleter(mi);
    lt_scope_end(); /* t and tt die: the export keeps the memory */
    lt_scope_begin();
    assert_true(((float *)d->data)[4] == 50);
    m->deleter(m);
}

static void test_import_calls_deleter_once(void **state)
{
    (void)state;
    double data[6] = {1, 2, 3, 4, 5, 6};
    int64_t shape[2] = {2, 2}, strides[2] = {3, 1}; /* the first two columns of a [2, 3] array */
    lt_dl_managed_tensor m = {{data, {LT_DL_CPU, 0}, 2, {LT_DL_FLOAT, 64, 1}, shape, strides, sizeof(double)},
                              NULL, count_delete};
    deletes = 0;
    lt_scope_begin(); /* t and v below hold only the references released here */
    lt_tensor *t = LT_OK_T(lt_retain(lt_from_dlpack(&m))); /* byte_offset: from data[1] */
    assert_int_equal(lt_tensor_dtype(t), LT_F64);
    LT_ASSERT_VALUES(t, 0, 2, 3, 5, 6);
    lt_tensor *v = LT_OK_T(lt_retain(lt_select(t, 0, 1)));
    lt_scope_end();
    lt_release(t);
    assert_int_equal(deletes, 0); /* the view keeps it */
    LT_ASSERT_VALUES(v, 0, 5, 6);
    lt_release(v);
    assert_int_equal(deletes, 1);
}

static void test_round_trip(void **state)
{
    (void)state;
    lt_tensor *t = LT_T(LT_U8, LT_DIMS(3), 1, 2, 3);
    lt_tensor *back = LT_OK_T(lt_from_dlpack(lt_to_dlpack(t)));
    assert_ptr_equal(lt_tensor_data(back), lt_tensor_data(t));
    assert_int_equal(lt_tensor_dtype(back), LT_U8);
    LT_OK_T(lt_add_iscalar_(back, 10));
    LT_ASSERT_VALUES(t, 0, 11, 12, 13); /* the export's deleter runs when back dies, at the scope's end */
}

static void test_refusals(void **state)
{
    (void)state;
    float x = 0;
    int64_t one = 1;
    deletes = 0;
    assert_null(lt_to_dlpack(LT_OK_T(lt_ones(LT_DIMS(2), LT_F32, lt_device_parse("lazy")))));
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "to_dlpack: only cpu tensors are exported, this one is on lazy");
    assert_null(lt_to_dlpack(NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "to_dlpack: argument 0 is NULL");
    assert_null(lt_from_dlpack(NULL));
    LT_EXPECT_ERROR(LT_ERR_NULL, "from_dlpack: the managed tensor is NULL");
    lt_dl_managed_tensor m = {{&x, {2, 0}, 1, {LT_DL_FLOAT, 32, 1}, &one, NULL, 0}, NULL, count_delete};
    assert_null(lt_from_dlpack(&m));
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "from_dlpack: device type 2");
    m.dl_tensor.device.device_type = LT_DL_CPU;
    m.dl_tensor.dtype.lanes = 4;
    assert_null(lt_from_dlpack(&m));
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "dtype code 2, 32 bits, 4 lanes has no lazytensor dtype");
    m.dl_tensor.dtype = (lt_dl_dtype){LT_DL_UINT, 16, 1};
    assert_null(lt_from_dlpack(&m));
    assert_int_equal(lt_last_status(), LT_ERR_DTYPE);
    lt_clear_error();
    m.dl_tensor.dtype = (lt_dl_dtype){LT_DL_FLOAT, 32, 1};
    m.dl_tensor.ndim = LT_MAX_DIMS + 1;
    assert_null(lt_from_dlpack(&m));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "from_dlpack: 9 dims");
    m.dl_tensor.ndim = 1;
    m.dl_tensor.shape = NULL;
    assert_null(lt_from_dlpack(&m));
    LT_EXPECT_ERROR(LT_ERR_NULL, "from_dlpack: the shape is NULL");
    assert_int_equal(deletes, 0); /* refused tensors stay the producer's */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_export_fields_and_sharing),
        LT_TEST(test_import_calls_deleter_once),
        LT_TEST(test_round_trip),
        LT_TEST(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
