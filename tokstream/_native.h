/* What the compiled core's files share: the pair table and the module (_native.c), the
 * text encoder (_native_text.c), the block keys (_native_keys.c) and the token trie's
 * walk (_native_walk.c). */
#ifndef TOKSTREAM_NATIVE_H
#define TOKSTREAM_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define EMPTY_KEY UINT64_MAX
#define NO_MERGE UINT64_MAX
#define SCAN_MAX 48
#define GIL_MIN 256

typedef struct {
    uint64_t key;   /* left << 32 | right; EMPTY_KEY when free */
    uint64_t value; /* rank << 32 | merged id */
} Slot;

typedef struct {
    PyObject_HEAD
    Slot *slots;
    uint64_t mask;     /* slot count - 1 (a power of two) */
    int shift;         /* 64 - log2(slot count) */
    Py_ssize_t count;  /* pairs stored */
    int64_t byte_ids[256]; /* initial symbol of each byte, -1 when none */
} PairTable;

static inline uint64_t slot_of(const PairTable *t, uint64_t key) {
    /* Fibonacci hashing: the high bits of key * 2^64/phi. */
    return (key * 0x9E3779B97F4A7C15ULL) >> t->shift;
}

static inline uint64_t lookup(const PairTable *t, uint32_t left, uint32_t right) {
    uint64_t key = ((uint64_t)left << 32) | right;
    uint64_t i = slot_of(t, key);
    for (;;) {
        const Slot *s = &t->slots[i];
        if (s->key == key) return s->value;
        if (s->key == EMPTY_KEY) return NO_MERGE;
        i = (i + 1) & t->mask;
    }
}

/* Merge sym[0..n) in place; returns the new length, or -1 when scratch space cannot
 * be allocated (no Python error set: callable without the GIL). */
Py_ssize_t ts_merge_symbols(const PairTable *t, uint32_t *sym, Py_ssize_t n);

/* _native_keys.c: the prefix-cache planner's chained block keys. */
PyObject *ts_chain_keys(PyObject *module, PyObject *args, PyObject *kw);
PyObject *ts_sha_extensions(PyObject *module, PyObject *ignored);

extern PyTypeObject ts_PairTableType;
extern PyTypeObject ts_TextEncoderType;
extern PyTypeObject ts_TokenTrieType;

#endif
