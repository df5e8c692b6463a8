/* device.c - device values. */
#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool lt_lazy_device_available = false;

static lt_device invalid_device(void)
{
    lt_device d = {LT_DEVICE_INVALID, 0};
    return d;
}

lt_status lt_device_check_available(const char *op, lt_device dev)
{
    bool ok = dev.index == 0 &&
              (dev.kind == LT_DEVICE_CPU || (dev.kind == LT_DEVICE_LAZY && lt_lazy_device_available));
    if (ok)
        return LT_OK;
    char buf[32];
    return lt_error(LT_ERR_DEVICE, "%s: device %s is not available (expected cpu:0 or lazy:0)", op,
                    lt_device_str(dev, buf, sizeof buf));
}

lt_device lt_device_cpu(void)
{
    lt_device d = {LT_DEVICE_CPU, 0};
    return d;
}

static bool parse_index(const char *s, int *index)
{
    if (*s == '\0') {
        *index = 0;
        return true;
    }
    if (*s != ':' || s[1] == '\0')
        return false;
    char *end = NULL;
    long v = strtol(s + 1, &end, 10);
    if (*end != '\0' || v < 0 || v > 1024)
        return false;
    *index = (int)v;
    return true;
}

lt_device lt_device_parse(const char *name)
{
    if (!name) {
        lt_error(LT_ERR_NULL, "device_parse: name is NULL");
        return invalid_device();
    }
    lt_device d = invalid_device();
    const char *rest = NULL;
    if (strncmp(name, "cpu", 3) == 0) {
        d.kind = LT_DEVICE_CPU;
        rest = name + 3;
    } else if (strncmp(name, "lazy", 4) == 0) {
        d.kind = LT_DEVICE_LAZY;
        rest = name + 4;
    }
    if (!rest || !parse_index(rest, &d.index)) {
        lt_error(LT_ERR_DEVICE, "device_parse: unknown device \"%s\" (expected \"cpu\" or \"lazy\", "
                 "optionally with \":<index>\")", name);
        return invalid_device();
    }
    if (d.kind == LT_DEVICE_LAZY && !lt_lazy_device_available) {
        lt_error(LT_ERR_UNSUPPORTED, "device_parse: the \"lazy\" device is not available in this build");
        return invalid_device();
    }
    if (d.index != 0) {
        lt_error(LT_ERR_UNSUPPORTED, "device_parse: \"%s\": only index 0 exists in this build", name);
        return invalid_device();
    }
    return d;
}

bool lt_device_equal(lt_device a, lt_device b) { return a.kind == b.kind && a.index == b.index; }

const char *lt_device_str(lt_device d, char *buf, size_t cap)
{
    const char *kind = d.kind == LT_DEVICE_CPU ? "cpu" : d.kind == LT_DEVICE_LAZY ? "lazy" : "invalid";
    if (buf && cap)
        snprintf(buf, cap, "%s:%d", kind, d.index);
    return buf;
}
