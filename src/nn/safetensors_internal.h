/*
 * safetensors_internal.h - pieces of the safetensors reader and writer
 * shared by src/nn/safetensors.c (save, load), src/nn/safetensors_header.c
 * (parsing and validating the JSON header) and src/nn/tmpfile.c (the
 * temporary files behind atomic saves).
 */
#ifndef LT_SAFETENSORS_INTERNAL_H
#define LT_SAFETENSORS_INTERNAL_H

#include "api/api.h"

#define LT_ST_MAX_HEADER ((uint64_t)100 << 20) /* 100 MB, as the reference reader */
#define LT_ST_MAX_FILE_DIMS 64                 /* dims a file entry may have */
#define LT_ST_NUM_DTYPES 15

/* Every dtype the format defines; `dt` is -1 for those lazytensor lacks
 * (such entries are validated and may be skipped, but not loaded). */
typedef struct lt_st_dtype {
    const char *name;
    int dt;
    int size;
} lt_st_dtype;

extern const lt_st_dtype lt_st_dtypes[LT_ST_NUM_DTYPES];

/* The format's name of dt ("F32", ...), NULL if it has none. */
const char *lt_st_name_of(lt_dtype dt);

/* One tensor entry of a parsed header. */
typedef struct lt_st_entry {
    char *name;
    int dtype; /* index into lt_st_dtypes */
    int ndim;
    int64_t shape[LT_ST_MAX_FILE_DIMS];
    int64_t begin, end; /* data_offsets, relative to the data section */
    bool has_dtype, has_shape, has_offsets;
} lt_st_entry;

typedef struct lt_st_header {
    lt_st_entry *entries; /* sorted by name once parsed */
    int count, cap;
} lt_st_header;

/*
 * Parses the header text (len bytes) of `path` into h and validates it
 * against the data_len bytes that follow it: unique names, each entry's
 * byte range equal to its dtype size times its shape (overflow-checked),
 * and the ranges tiling the data section exactly. LT_ERR_IO naming the
 * file and the fault on failure; h must be freed either way.
 */
lt_status lt_st_header_parse(const char *path, const char *text, size_t len, int64_t data_len, lt_st_header *h);
/* The entry called name, or NULL. */
const lt_st_entry *lt_st_header_find(const lt_st_header *h, const char *name);
void lt_st_header_free(lt_st_header *h);

/*
 * Temporary files for atomic saves: "<path>.tmp.<pid>.<16 hex digits>",
 * created with O_CREAT | O_EXCL | O_NOFOLLOW (never through a symlink,
 * never an existing file) and mode 0644 (before the umask). Returns the
 * open descriptor and the name in tmp (cap bytes), or -1 with errno set.
 */
int lt_tmpfile_create(const char *path, char *tmp, size_t cap);
/* Bytes lt_tmpfile_create needs for the name of a temp file of path. */
size_t lt_tmpfile_name_cap(const char *path);
/*
 * Removes the temp files left in path's directory by writers that died
 * before renaming them (a save killed part-way): regular files owned by
 * this user whose name follows the pattern above and whose pid names no
 * live process. Other files are left alone. Best effort: errors are
 * ignored.
 */
void lt_tmpfile_sweep_stale(const char *path);

#endif
