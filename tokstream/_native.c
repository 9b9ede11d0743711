/* tokstream._native: the BPE merge loop in C, behind the pure-Python functions.
 *
 * One object, PairTable: (left id, right id) -> (rank, merged id), open addressing
 * over 64-bit keys, built once per tokenizer. Its merge loop is the one both BPE
 * models run: tiktoken's (rank files: a pair merges when its concatenated bytes are a
 * token, rank = merged id) and tokenizers' (merge lists: rank = position in the list).
 * The pure-Python copies (models/ranks.py, models/bpe.py) stay the oracle; tests
 * compare the two on every fixture tokenizer.
 *
 * Cost (written down first, as the hot path is built around it):
 *  - table: 16 bytes a slot, load factor <= 1/2: o200k's 446k pairs take 2^20 slots,
 *    16 MB, built in ~0.1-0.2 s (memory-bound, PairTable_from_ranks); Llama 3's 280k
 *    merges ~5 ms. Lookup: one multiply-shift hash, a linear probe, usually one cache
 *    miss.
 *  - merge of n symbols: below SCAN_MAX a flat scan, O(n^2) with a tiny constant
 *    (tiktoken's loop); above, a binary heap of (packed merge, position) over a linked
 *    list, O(n log n), stale entries skipped on pop (Rust tokenizers' merge_all).
 *  - the GIL is released around merges of at least GIL_MIN symbols: no Python object
 *    is touched there, so threads encoding long pieces run on all cores.
 *
 * Memory safety: every index is bounded by n (the symbol count) or by the table
 * mask; allocations are checked; tools/asan_native.sh runs the differential tests
 * under AddressSanitizer and UBSan.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_native.h"

/* Insert or overwrite (a pair listed twice keeps its last rank, as tokenizers'
 * HashMap collected in order). The caller keeps the load factor <= 1/2. */
static void insert(PairTable *t, uint64_t key, uint64_t value) {
    uint64_t i = slot_of(t, key);
    for (;;) {
        Slot *s = &t->slots[i];
        if (s->key == key) { s->value = value; return; }
        if (s->key == EMPTY_KEY) { s->key = key; s->value = value; t->count++; return; }
        i = (i + 1) & t->mask;
    }
}

static int allocate(PairTable *t, Py_ssize_t pairs) {
    uint64_t size = 16;
    int bits = 4;
    while (size < (uint64_t)pairs * 2 + 16) { size <<= 1; bits++; }
    if (size > ((uint64_t)1 << 40) / sizeof(Slot)) { PyErr_NoMemory(); return -1; }
    t->slots = PyMem_Malloc(size * sizeof(Slot));
    if (!t->slots) { PyErr_NoMemory(); return -1; }
    memset(t->slots, 0xFF, size * sizeof(Slot)); /* every key EMPTY_KEY */
    t->mask = size - 1;
    t->shift = 64 - bits;
    t->count = 0;
    return 0;
}

/* ------------------------------------------------------------------ merging */

typedef struct { uint64_t merge; uint32_t pos; } Entry;

static inline int entry_less(const Entry *a, const Entry *b) {
    return a->merge < b->merge || (a->merge == b->merge && a->pos < b->pos);
}

static void heap_push(Entry *h, Py_ssize_t *len, Entry e) {
    Py_ssize_t i = (*len)++;
    while (i > 0) {
        Py_ssize_t p = (i - 1) / 2;
        if (!entry_less(&e, &h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

/* Move e down from slot i of a heap of len entries to where it belongs. */
static void sift_down(Entry *h, Py_ssize_t len, Py_ssize_t i, Entry e) {
    for (;;) {
        Py_ssize_t c = 2 * i + 1;
        if (c >= len) break;
        if (c + 1 < len && entry_less(&h[c + 1], &h[c])) c++;
        if (!entry_less(&h[c], &e)) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

static Entry heap_pop(Entry *h, Py_ssize_t *len) {
    Entry top = h[0], last = h[--(*len)];
    if (*len > 0) sift_down(h, *len, 0, last);
    return top;
}

/* Lowest merge, leftmost first, over a flat array: tiktoken's loop. Returns the new
 * length; sym[0..len) holds the result. cand has room for n - 1 entries. */
static Py_ssize_t merge_scan(const PairTable *t, uint32_t *sym, Py_ssize_t n, uint64_t *cand) {
    for (Py_ssize_t i = 0; i + 1 < n; i++) cand[i] = lookup(t, sym[i], sym[i + 1]);
    while (n > 1) {
        Py_ssize_t best = 0;
        for (Py_ssize_t i = 1; i + 1 < n; i++)
            if (cand[i] < cand[best]) best = i;
        if (cand[best] == NO_MERGE) break;
        sym[best] = (uint32_t)(cand[best] & 0xFFFFFFFFu);
        /* drop symbol best + 1 and candidate best + 1 ... shift left */
        memmove(sym + best + 1, sym + best + 2, (size_t)(n - best - 2) * sizeof(uint32_t));
        memmove(cand + best + 1, cand + best + 2, (size_t)(n > best + 2 ? n - best - 3 : 0) * sizeof(uint64_t));
        n--;
        if (best + 1 < n) cand[best] = lookup(t, sym[best], sym[best + 1]);
        else cand[best] = NO_MERGE;
        if (best > 0) cand[best - 1] = lookup(t, sym[best - 1], sym[best]);
    }
    return n;
}

/* A heap of (merge, position) over a linked list, for long pieces: O(n log n).
 * A popped entry is stale unless the pair at its position still merges into the
 * same id (Rust tokenizers' check; for rank files the id is the rank). */
static Py_ssize_t merge_heap(const PairTable *t, uint32_t *sym, Py_ssize_t n, int32_t *nxt, int32_t *prv, Entry *heap) {
    Py_ssize_t len = 0;
    for (Py_ssize_t i = 0; i < n; i++) { nxt[i] = (int32_t)(i + 1); prv[i] = (int32_t)(i - 1); }
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        uint64_t m = lookup(t, sym[i], sym[i + 1]);
        if (m != NO_MERGE) { Entry e = {m, (uint32_t)i}; heap[len++] = e; }
    }
    for (Py_ssize_t k = len / 2 - 1; k >= 0; k--) sift_down(heap, len, k, heap[k]); /* heapify */
    while (len > 0) {
        Entry e = heap_pop(heap, &len);
        int32_t pos = (int32_t)e.pos;
        int32_t right = nxt[pos];
        if (right < 0 || right >= n) continue; /* merged away, or the last symbol */
        uint32_t new_id = (uint32_t)(e.merge & 0xFFFFFFFFu);
        uint64_t now = lookup(t, sym[pos], sym[right]);
        if (now == NO_MERGE || (uint32_t)(now & 0xFFFFFFFFu) != new_id) continue;
        sym[pos] = new_id;
        int32_t after = nxt[right];
        nxt[pos] = after;
        nxt[right] = -1;
        if (after < n) prv[after] = pos;
        int32_t before = prv[pos];
        if (before >= 0) {
            uint64_t m = lookup(t, sym[before], new_id);
            if (m != NO_MERGE) { Entry b = {m, (uint32_t)before}; heap_push(heap, &len, b); }
        }
        if (after < n) {
            uint64_t m = lookup(t, new_id, sym[after]);
            if (m != NO_MERGE) { Entry a = {m, (uint32_t)pos}; heap_push(heap, &len, a); }
        }
    }
    Py_ssize_t out = 0;
    for (Py_ssize_t i = 0; i < n; i = nxt[i]) sym[out++] = sym[i];
    return out;
}

/* Merge sym[0..n) in place (declared in _native.h). The GIL, when the caller holds
 * it, is released around merges of at least GIL_MIN symbols. */
static Py_ssize_t merge_long(const PairTable *t, uint32_t *sym, Py_ssize_t n) {
    if (n > INT32_MAX / 4) return -1;
    /* Each merge pushes at most two entries and there are at most n - 1 merges. */
    size_t heap_cap = (size_t)3 * (size_t)n;
    int32_t *links = PyMem_RawMalloc((size_t)n * 2 * sizeof(int32_t));
    Entry *heap = PyMem_RawMalloc(heap_cap * sizeof(Entry));
    Py_ssize_t out = -1;
    if (links && heap) out = merge_heap(t, sym, n, links, links + n, heap);
    PyMem_RawFree(links);
    PyMem_RawFree(heap);
    return out;
}

Py_ssize_t ts_merge_symbols(const PairTable *t, uint32_t *sym, Py_ssize_t n) {
    if (n < 2) return n;
    if (n <= SCAN_MAX) {
        uint64_t cand[SCAN_MAX];
        return merge_scan(t, sym, n, cand);
    }
    return merge_long(t, sym, n);
}

/* ts_merge_symbols with the GIL held: released for long pieces; MemoryError set on -1. */
static Py_ssize_t merge_symbols(const PairTable *t, uint32_t *sym, Py_ssize_t n) {
    Py_ssize_t out;
    if (n >= GIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        out = ts_merge_symbols(t, sym, n);
        Py_END_ALLOW_THREADS
    } else {
        out = ts_merge_symbols(t, sym, n);
    }
    if (out < 0) PyErr_NoMemory();
    return out;
}

static PyObject *ids_tuple(const uint32_t *sym, Py_ssize_t n) {
    PyObject *out = PyTuple_New(n);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyLong_FromUnsignedLong(sym[i]);
        if (!v) { Py_DECREF(out); return NULL; }
        PyTuple_SET_ITEM(out, i, v);
    }
    return out;
}

/* ------------------------------------------------------------------ methods */

static PyObject *PairTable_encode_bytes(PairTable *self, PyObject *arg) {
    if (!PyBytes_Check(arg)) { PyErr_SetString(PyExc_TypeError, "encode_bytes expects bytes"); return NULL; }
    Py_ssize_t n = PyBytes_GET_SIZE(arg);
    const unsigned char *data = (const unsigned char *)PyBytes_AS_STRING(arg);
    uint32_t small[SCAN_MAX];
    uint32_t *sym = n <= SCAN_MAX ? small : PyMem_Malloc((size_t)n * sizeof(uint32_t));
    if (!sym) return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t id = self->byte_ids[data[i]];
        if (id < 0) {
            /* A byte with no token: the caller's pure path names it. */
            if (sym != small) PyMem_Free(sym);
            Py_RETURN_NONE;
        }
        sym[i] = (uint32_t)id;
    }
    Py_ssize_t m = merge_symbols(self, sym, n);
    PyObject *out = m < 0 ? NULL : ids_tuple(sym, m);
    if (sym != small) PyMem_Free(sym);
    return out;
}

static PyObject *PairTable_merge(PairTable *self, PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "merge expects a list of ids");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    uint32_t small[SCAN_MAX];
    uint32_t *sym = n <= SCAN_MAX ? small : PyMem_Malloc((size_t)n * sizeof(uint32_t));
    if (!sym) { Py_DECREF(seq); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned long v = PyLong_AsUnsignedLong(items[i]);
        if (v == (unsigned long)-1 && PyErr_Occurred()) goto fail;
        if (v > 0xFFFFFFFFUL) { PyErr_SetString(PyExc_OverflowError, "symbol id above 2**32 - 1"); goto fail; }
        sym[i] = (uint32_t)v;
    }
    Py_DECREF(seq);
    Py_ssize_t m = merge_symbols(self, sym, n);
    PyObject *out = m < 0 ? NULL : ids_tuple(sym, m);
    if (sym != small) PyMem_Free(sym);
    return out;
fail:
    Py_DECREF(seq);
    if (sym != small) PyMem_Free(sym);
    return NULL;
}

static PyObject *PairTable_set_byte_ids(PairTable *self, PyObject *arg) {
    PyObject *seq = PySequence_Fast(arg, "set_byte_ids expects 256 ids or None");
    if (!seq) return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != 256) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "set_byte_ids expects exactly 256 entries");
        return NULL;
    }
    int64_t ids[256];
    for (int b = 0; b < 256; b++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, b);
        if (item == Py_None) { ids[b] = -1; continue; }
        unsigned long v = PyLong_AsUnsignedLong(item);
        if ((v == (unsigned long)-1 && PyErr_Occurred()) || v > 0xFFFFFFFFUL) {
            Py_DECREF(seq);
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_OverflowError, "byte id above 2**32 - 1");
            return NULL;
        }
        ids[b] = (int64_t)v;
    }
    Py_DECREF(seq);
    memcpy(self->byte_ids, ids, sizeof ids);
    Py_RETURN_NONE;
}

static PyObject *PairTable_len(PairTable *self, PyObject *Py_UNUSED(ignored)) {
    return PyLong_FromSsize_t(self->count);
}

/* ------------------------------------------------------------- construction */


static PairTable *new_table(void) {
    PairTable *t = PyObject_New(PairTable, &ts_PairTableType);
    if (!t) return NULL;
    t->slots = NULL;
    t->count = 0;
    for (int b = 0; b < 256; b++) t->byte_ids[b] = -1;
    return t;
}

/* PairTable(lefts, rights, merged): three equal-length buffers of unsigned 64-bit
 * ids (numpy uint64/int64 arrays), rank = index. */
static PyObject *PairTable_from_merges(PyObject *Py_UNUSED(cls), PyObject *args) {
    Py_buffer a, b, c;
    if (!PyArg_ParseTuple(args, "y*y*y*:from_merges", &a, &b, &c)) return NULL;
    PairTable *t = NULL;
    if (a.len != b.len || a.len != c.len || a.len % 8) {
        PyErr_SetString(PyExc_ValueError, "from_merges: three buffers of 64-bit ids of one length");
        goto done;
    }
    Py_ssize_t n = a.len / 8;
    if (n >= ((Py_ssize_t)1 << 31)) { PyErr_SetString(PyExc_OverflowError, "too many merges"); goto done; }
    t = new_table();
    if (!t) goto done;
    if (allocate(t, n) < 0) { Py_CLEAR(t); goto done; }
    const uint64_t *l = a.buf, *r = b.buf, *m = c.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (l[i] > 0xFFFFFFFFu || r[i] > 0xFFFFFFFFu || m[i] > 0xFFFFFFFFu) {
            PyErr_Format(PyExc_OverflowError, "merge %zd: an id above 2**32 - 1", i);
            Py_CLEAR(t);
            goto done;
        }
        uint64_t key = (l[i] << 32) | r[i];
        if (key == EMPTY_KEY) {
            PyErr_Format(PyExc_ValueError, "merge %zd: the pair (2**32-1, 2**32-1) is reserved", i);
            Py_CLEAR(t);
            goto done;
        }
        insert(t, key, ((uint64_t)i << 32) | m[i]);
    }
done:
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    PyBuffer_Release(&c);
    return (PyObject *)t;
}

/* A bytes -> rank table, only while building from a rank file: 16-byte slots over a
 * copy of the tokens' bytes in one arena, each slot holding a hash tag, so a probe
 * reads the arena only on a likely match (the build is memory-bound: ~1.2M splits
 * for o200k). Polynomial hashes extend by one byte at either end in O(1), so every
 * prefix and suffix of a token is hashed in one pass over it. */
typedef struct { uint32_t tag; uint32_t len; uint32_t offset; int32_t rank; } Token;

#define HASH_BASE 0x100000001B3ULL

static inline uint64_t finish_hash(uint64_t h, Py_ssize_t n) {
    h ^= (uint64_t)n * 0x9E3779B97F4A7C15ULL; /* murmur3's fmix64 */
    h ^= h >> 33; h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33; h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

static inline uint64_t poly_hash(const unsigned char *p, Py_ssize_t n) {
    uint64_t h = 0;
    for (Py_ssize_t i = 0; i < n; i++) h = h * HASH_BASE + p[i] + 1;
    return h;
}

static int64_t token_rank(const Token *tab, uint64_t mask, const unsigned char *arena, uint64_t h,
                          const unsigned char *p, Py_ssize_t n) {
    uint64_t f = finish_hash(h, n);
    uint32_t tag = (uint32_t)(f >> 32);
    uint64_t i = f & mask;
    for (;;) {
        const Token *s = &tab[i];
        if (s->len == 0) return -1;
        if (s->tag == tag && s->len == (uint32_t)n && memcmp(arena + s->offset, p, (size_t)n) == 0) return s->rank;
        i = (i + 1) & mask;
    }
}

/* PairTable.from_ranks(ranks): every split of every token into two tokens, at the
 * token's rank (tiktoken merges any adjacent pair whose concatenation is a token).
 * The byte ids are the single-byte tokens'. The empty token is skipped. */
static PyObject *PairTable_from_ranks(PyObject *Py_UNUSED(cls), PyObject *ranks) {
    if (!PyDict_Check(ranks)) { PyErr_SetString(PyExc_TypeError, "from_ranks expects a dict of bytes to int"); return NULL; }
    Py_ssize_t count = PyDict_Size(ranks), total = 0, pos = 0, pairs = 0;
    PyObject *key, *value;
    while (PyDict_Next(ranks, &pos, &key, &value)) {
        if (!PyBytes_Check(key) || !PyLong_Check(value)) {
            PyErr_SetString(PyExc_TypeError, "from_ranks expects a dict of bytes to int");
            return NULL;
        }
        total += PyBytes_GET_SIZE(key);
    }
    if (total >= 0xFFFFFFFFLL || count >= 0x7FFFFFFFLL) { PyErr_SetString(PyExc_OverflowError, "rank file too large"); return NULL; }
    uint64_t size = 16;
    while (size < (uint64_t)count + (uint64_t)count / 3 + 16) size <<= 1;
    Token *tab = PyMem_Calloc(size, sizeof(Token));
    unsigned char *arena = PyMem_Malloc((size_t)total + 1);
    uint32_t *starts = PyMem_Malloc((size_t)(count + 1) * sizeof(uint32_t));
    int32_t *token_ranks = PyMem_Malloc((size_t)(count + 1) * sizeof(int32_t));
    uint64_t *prefix = NULL, *suffix = NULL;
    PairTable *t = NULL;
    Py_ssize_t k = 0, used = 0, longest = 0;
    if (!tab || !arena || !starts || !token_ranks) { PyErr_NoMemory(); goto done; }
    pos = 0;
    while (PyDict_Next(ranks, &pos, &key, &value)) {
        long long r = PyLong_AsLongLong(value);
        if (r == -1 && PyErr_Occurred()) goto done;
        if (r < 0 || r > 0x7FFFFFFFLL) { PyErr_Format(PyExc_OverflowError, "rank %lld out of [0, 2**31)", r); goto done; }
        Py_ssize_t n = PyBytes_GET_SIZE(key);
        if (n == 0) continue;
        memcpy(arena + used, PyBytes_AS_STRING(key), (size_t)n);
        uint64_t f = finish_hash(poly_hash(arena + used, n), n);
        uint64_t i = f & (size - 1);
        while (tab[i].len) i = (i + 1) & (size - 1);
        Token tok = {(uint32_t)(f >> 32), (uint32_t)n, (uint32_t)used, (int32_t)r};
        tab[i] = tok;
        starts[k] = (uint32_t)used;
        token_ranks[k++] = (int32_t)r;
        used += n;
        pairs += n - 1;
        if (n > longest) longest = n;
    }
    starts[k] = (uint32_t)used;
    prefix = PyMem_Malloc((size_t)(longest + 1) * sizeof(uint64_t));
    suffix = PyMem_Malloc((size_t)(longest + 1) * sizeof(uint64_t));
    if (!prefix || !suffix) { PyErr_NoMemory(); goto done; }
    t = new_table();
    if (!t) goto done;
    if (allocate(t, pairs) < 0) { Py_CLEAR(t); goto done; }
    for (Py_ssize_t j = 0; j < k; j++) {
        const unsigned char *p = arena + starts[j];
        Py_ssize_t n = (Py_ssize_t)(starts[j + 1] - starts[j]);
        uint64_t rank = (uint64_t)token_ranks[j];
        if (n == 1) { t->byte_ids[p[0]] = (int64_t)rank; continue; }
        /* prefix[c] hashes p[0..c), suffix[c] hashes p[c..n) */
        uint64_t h = 0, power = 1;
        for (Py_ssize_t c = 0; c < n; c++) { h = h * HASH_BASE + p[c] + 1; prefix[c + 1] = h; }
        h = 0;
        for (Py_ssize_t c = n - 1; c >= 0; c--) { h += (p[c] + 1) * power; power *= HASH_BASE; suffix[c] = h; }
        for (Py_ssize_t cut = 1; cut < n; cut++) {
            int64_t left = token_rank(tab, size - 1, arena, prefix[cut], p, cut);
            if (left < 0) continue;
            int64_t right = token_rank(tab, size - 1, arena, suffix[cut], p + cut, n - cut);
            if (right < 0) continue;
            insert(t, ((uint64_t)left << 32) | (uint64_t)right, (rank << 32) | rank);
        }
    }
done:
    PyMem_Free(tab);
    PyMem_Free(arena);
    PyMem_Free(starts);
    PyMem_Free(token_ranks);
    PyMem_Free(prefix);
    PyMem_Free(suffix);
    return (PyObject *)t;
}

static void PairTable_dealloc(PairTable *self) {
    PyMem_Free(self->slots);
    PyObject_Free(self);
}

static PyObject *PairTable_new(PyTypeObject *Py_UNUSED(type), PyObject *Py_UNUSED(args), PyObject *Py_UNUSED(kw)) {
    PyErr_SetString(PyExc_TypeError, "build a PairTable with PairTable.from_merges or PairTable.from_ranks");
    return NULL;
}

static PyMethodDef PairTable_methods[] = {
    {"from_merges", (PyCFunction)PairTable_from_merges, METH_VARARGS | METH_STATIC,
     "from_merges(lefts, rights, merged): a merge list's table (64-bit id buffers, rank = index)."},
    {"from_ranks", (PyCFunction)PairTable_from_ranks, METH_O | METH_STATIC,
     "from_ranks(ranks): a rank file's table (every split of a token into two tokens)."},
    {"encode_bytes", (PyCFunction)PairTable_encode_bytes, METH_O,
     "encode_bytes(piece): the merged ids of a piece's bytes, or None when a byte has no id."},
    {"merge", (PyCFunction)PairTable_merge, METH_O, "merge(symbols): the merged ids of a list of symbol ids."},
    {"set_byte_ids", (PyCFunction)PairTable_set_byte_ids, METH_O,
     "set_byte_ids(ids): the initial symbol of each byte (256 ids or None)."},
    {"pair_count", (PyCFunction)PairTable_len, METH_NOARGS, "pair_count(): pairs stored."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject ts_PairTableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tokstream._native.PairTable",
    .tp_basicsize = sizeof(PairTable),
    .tp_dealloc = (destructor)PairTable_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "(left id, right id) -> (rank, merged id), and the BPE merge loop over it.",
    .tp_methods = PairTable_methods,
    .tp_new = PairTable_new,
};

static PyMethodDef module_methods[] = {
    {"chain_keys", (PyCFunction)(void (*)(void))ts_chain_keys, METH_VARARGS | METH_KEYWORDS,
     "chain_keys(seed, extra, data, block_bytes, count, portable=False): the planner's chained sha256 keys, as hex."},
    {"sha_extensions", ts_sha_extensions, METH_NOARGS, "sha_extensions(): whether chain_keys uses the CPU's SHA extensions."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "tokstream._native",
    "tokstream's compiled core (optional): the BPE merge loop, the text encoder, the block keys and the token trie's walk.", -1,
    module_methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    if (PyType_Ready(&ts_PairTableType) < 0 || PyType_Ready(&ts_TextEncoderType) < 0 ||
        PyType_Ready(&ts_TokenTrieType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&ts_PairTableType);
    if (PyModule_AddObject(m, "PairTable", (PyObject *)&ts_PairTableType) < 0) {
        Py_DECREF(&ts_PairTableType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&ts_TextEncoderType);
    if (PyModule_AddObject(m, "TextEncoder", (PyObject *)&ts_TextEncoderType) < 0) {
        Py_DECREF(&ts_TextEncoderType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&ts_TokenTrieType);
    if (PyModule_AddObject(m, "TokenTrie", (PyObject *)&ts_TokenTrieType) < 0) {
        Py_DECREF(&ts_TokenTrieType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
