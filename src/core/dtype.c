/* dtype.c - dtype names, sizes, promotion and half-precision conversion. */
#include "core/core.h"

#include <string.h>

static const char *const dtype_names[LT_NUM_DTYPES] = {
    "f32", "f64", "i32", "i64", "u8", "bool", "bf16", "f16",
};
static const size_t dtype_sizes[LT_NUM_DTYPES] = {4, 8, 4, 8, 1, 1, 2, 2};

bool lt_dtype_valid(int dt) { return dt >= 0 && dt < LT_NUM_DTYPES; }

const char *lt_dtype_name(lt_dtype dt)
{
    return lt_dtype_valid((int)dt) ? dtype_names[dt] : "invalid";
}

size_t lt_dtype_size(lt_dtype dt) { return lt_dtype_valid((int)dt) ? dtype_sizes[dt] : 0; }

bool lt_dtype_is_floating(lt_dtype dt)
{
    return dt == LT_F32 || dt == LT_F64 || dt == LT_BF16 || dt == LT_F16;
}

/*
 * PyTorch's promotion lattice for our dtypes. Notable entries: u8 with i32
 * gives i32; bf16 with f16 gives f32; any float beats any integer.
 */
lt_dtype lt_promote_types(lt_dtype a, lt_dtype b)
{
    enum { f4 = LT_F32, f8 = LT_F64, i4 = LT_I32, i8 = LT_I64, u1 = LT_U8, b1 = LT_BOOL,
           bf = LT_BF16, hf = LT_F16 };
    static const unsigned char table[LT_NUM_DTYPES][LT_NUM_DTYPES] = {
        /*        f32 f64 i32 i64 u8  bool bf16 f16 */
        /* f32 */ {f4, f8, f4, f4, f4, f4, f4, f4},
        /* f64 */ {f8, f8, f8, f8, f8, f8, f8, f8},
        /* i32 */ {f4, f8, i4, i8, i4, i4, bf, hf},
        /* i64 */ {f4, f8, i8, i8, i8, i8, bf, hf},
        /* u8  */ {f4, f8, i4, i8, u1, u1, bf, hf},
        /* bool*/ {f4, f8, i4, i8, u1, b1, bf, hf},
        /* bf16*/ {f4, f8, bf, bf, bf, bf, bf, f4},
        /* f16 */ {f4, f8, hf, hf, hf, hf, f4, hf},
    };
    if (!lt_dtype_valid((int)a) || !lt_dtype_valid((int)b))
        return LT_NUM_DTYPES;
    return (lt_dtype)table[a][b];
}

/* bf16 is the top half of an f32; rounding is to nearest even, NaN kept. */
float lt_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t lt_f32_to_bf16(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((bits >> 16) | 0x40); /* quiet NaN */
    uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
    return (uint16_t)((bits + rounding) >> 16);
}

float lt_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else { /* subnormal: normalize */
            int shift = 0;
            while (!(mant & 0x400u)) {
                mant <<= 1;
                shift++;
            }
            mant &= 0x3ffu;
            bits = sign | ((uint32_t)(127 - 15 + 1 - shift) << 23) | (mant << 13);
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t lt_f32_to_f16(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    uint32_t abs_bits = bits & 0x7fffffffu;
    if (abs_bits > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u); /* NaN */
    if (abs_bits >= 0x47800000u)           /* >= 65536: overflow to inf */
        return (uint16_t)(sign | 0x7c00u);
    int exp = (int)(abs_bits >> 23) - 127 + 15;
    uint32_t mant = abs_bits & 0x7fffffu;
    if (exp <= 0) { /* subnormal or zero in f16 */
        if (exp < -10)
            return sign;
        mant |= 0x800000u;
        int shift = 14 - exp;
        uint32_t half = 1u << (shift - 1);
        uint32_t rest = mant & ((1u << shift) - 1);
        uint32_t value = mant >> shift;
        if (rest > half || (rest == half && (value & 1u)))
            value++;
        return (uint16_t)(sign | value);
    }
    uint32_t value = ((uint32_t)exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (value & 1u)))
        value++; /* may carry into the exponent, which is correct rounding */
    return (uint16_t)(sign | value);
}
