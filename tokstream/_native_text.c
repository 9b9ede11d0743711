/* tokstream._native.TextEncoder: a whole text to ids in one C loop, for the named
 * pre-tokenizer patterns (GPT-2's, cl100k_base's, Llama 3's, o200k_base's).
 *
 * The pure-Python path (_fastpath.PieceEncoder: the `regex` module, then a piece dict,
 * then the merge loop) stays the oracle; tests compare the two on every fixture
 * tokenizer, on hypothesis text and against tiktoken and tokenizers.
 *
 * Pieces: each pattern's alternatives are hand-written scanners over the text's UTF-8
 * (split_gpt2, split_cl100k, split_o200k below). Each follows its regex's
 * leftmost-first backtracking order alternative by alternative, and the comment above
 * it says which alternative each branch is. Character classes come from a table of one
 * byte per code point (0x110000 bytes, shared by every encoder) that the Python side
 * builds from Unicode 16.0 (tiktoken's version: pre_tokenizers/_unicode16.py), so no
 * stand-in path is needed for characters the installed `regex` classifies otherwise.
 *
 * Ids: a piece that is a token is one lookup in an open-addressing table of the
 * tokens' bytes (16-byte slots with a hash tag, over one arena); any other piece is
 * merged by the pair table (_native.c). A piece of one byte is its byte's id.
 *
 * Cost: the split is a few branches a byte (ASCII classes from a 128-entry table);
 * a token piece one hash of its bytes and usually one probe; memory is the token
 * table (~16 B a slot at load <= 1/2, plus the tokens' bytes: ~5 MB for o200k) and, per
 * call, the UTF-8 copy of the text and one 32-bit id per byte at most. The whole loop
 * runs without the GIL for texts of at least NOGIL_MIN bytes, so threads encoding
 * different texts run on all cores.
 */
#include "_native.h"
#include <sched.h>
#include <string.h>

#define NOGIL_MIN 4096

enum { K_GPT2 = 0, K_CL100K = 1, K_LLAMA3 = 2, K_O200K = 3 };

/* Class bits of a code point (the table's bytes). */
#define C_L 1  /* \p{L} */
#define C_N 2  /* \p{N} */
#define C_S 4  /* \s: White_Space */
#define C_U 8  /* o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] */
#define C_W 16 /* o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}] */

/* ------------------------------------------------------------------ piece cache */

/* Merged pieces -> ids, so text seen before skips the merge loop (a warm Japanese text
 * is mostly long pieces that are no token). Bounded: CACHE_SLOTS slots at load <= 1/2,
 * keys of at most CACHE_KEY_MAX bytes in a CACHE_BYTES arena, their ids in a
 * CACHE_IDS arena; a full cache is emptied (a stream of unique text cannot grow it):
 * ~6 MB an encoder at most. Encodes run without the GIL, so a spin lock guards it (its
 * critical sections are a probe and a memcpy, ~100 ns: a PyThread lock's semaphore
 * cost ~10% of a cold Japanese encode); it is taken only for pieces that are no token. */
#define CACHE_SLOTS (1 << 17)
#define CACHE_KEY_MAX 256
#define CACHE_BYTES (1 << 22)
#define CACHE_IDS (1 << 19)

typedef struct {
    uint64_t hash; /* 0: free */
    uint32_t key_off, key_len, ids_off, ids_len;
} CacheSlot;

typedef struct PieceCache {
    char lock; /* __atomic_test_and_set flag */
    CacheSlot *slots;
    unsigned char *keys;
    uint32_t *ids;
    uint32_t used, keys_used, ids_used;
} PieceCache;

static inline void cache_lock(PieceCache *c) {
    while (__atomic_test_and_set(&c->lock, __ATOMIC_ACQUIRE)) {
        /* Held by another thread for ~100 ns: wait for it to let go, then retry. */
        while (__atomic_load_n(&c->lock, __ATOMIC_RELAXED)) sched_yield();
    }
}

static inline void cache_unlock(PieceCache *c) { __atomic_clear(&c->lock, __ATOMIC_RELEASE); }

static int cache_init(PieceCache *c) {
    c->lock = 0;
    c->slots = PyMem_Calloc(CACHE_SLOTS, sizeof(CacheSlot));
    c->keys = PyMem_Malloc(CACHE_BYTES);
    c->ids = PyMem_Malloc(CACHE_IDS * sizeof(uint32_t));
    c->used = c->keys_used = c->ids_used = 0;
    if (!c->slots || !c->keys || !c->ids) { PyErr_NoMemory(); return -1; }
    return 0;
}

static void cache_free(PieceCache *c) {
    PyMem_Free(c->slots);
    PyMem_Free(c->keys);
    PyMem_Free(c->ids);
}

/* Copy the cached ids of p[0..n) (hash h) to out; their count, or -1 on a miss. */
static Py_ssize_t cache_get(PieceCache *c, uint64_t h, const unsigned char *p, Py_ssize_t n, uint32_t *out) {
    Py_ssize_t got = -1;
    cache_lock(c);
    for (uint64_t i = h & (CACHE_SLOTS - 1);; i = (i + 1) & (CACHE_SLOTS - 1)) {
        const CacheSlot *s = &c->slots[i];
        if (!s->hash) break;
        if (s->hash == h && s->key_len == (uint32_t)n && memcmp(c->keys + s->key_off, p, (size_t)n) == 0) {
            memcpy(out, c->ids + s->ids_off, s->ids_len * sizeof(uint32_t));
            got = s->ids_len;
            break;
        }
    }
    cache_unlock(c);
    return got;
}

static void cache_put(PieceCache *c, uint64_t h, const unsigned char *p, Py_ssize_t n, const uint32_t *ids,
                      Py_ssize_t m) {
    cache_lock(c);
    if (c->used >= CACHE_SLOTS / 2 || c->keys_used + n > CACHE_BYTES || c->ids_used + m > CACHE_IDS) {
        memset(c->slots, 0, CACHE_SLOTS * sizeof(CacheSlot));
        c->used = c->keys_used = c->ids_used = 0;
    }
    uint64_t i = h & (CACHE_SLOTS - 1);
    for (;; i = (i + 1) & (CACHE_SLOTS - 1)) {
        const CacheSlot *s = &c->slots[i];
        if (!s->hash) break;
        if (s->hash == h && s->key_len == (uint32_t)n && memcmp(c->keys + s->key_off, p, (size_t)n) == 0) {
            cache_unlock(c); /* another thread put it meanwhile */
            return;
        }
    }
    CacheSlot slot = {h, c->keys_used, (uint32_t)n, c->ids_used, (uint32_t)m};
    memcpy(c->keys + c->keys_used, p, (size_t)n);
    memcpy(c->ids + c->ids_used, ids, (size_t)m * sizeof(uint32_t));
    c->keys_used += (uint32_t)n;
    c->ids_used += (uint32_t)m;
    c->slots[i] = slot;
    c->used++;
    cache_unlock(c);
}

typedef struct {
    uint32_t tag;    /* high bits of the hash */
    uint32_t len;    /* 0: free */
    uint32_t offset; /* into the arena */
    uint32_t id;
} TokenSlot;

typedef struct {
    PyObject_HEAD
    int kind;
    PyObject *table_obj;   /* the PairTable (owned) */
    PyObject *classes_obj; /* bytes of 0x110000 class bytes (owned) */
    const PairTable *table;
    const uint8_t *classes;
    TokenSlot *tokens; /* NULL: no whole-token lookup (merge every piece) */
    uint64_t token_mask;
    unsigned char *arena;
    uint32_t byte_ids[256];
    PieceCache cache;
} TextEncoder;

/* ------------------------------------------------------------------ reading */

typedef struct {
    const uint8_t *s;
    Py_ssize_t n;
    const uint8_t *classes;
} Text;

/* The code point at byte i (< n) of valid UTF-8 (CPython's own encoding of a str),
 * and its width in *w. */
static inline uint32_t decode(const uint8_t *s, Py_ssize_t i, int *w) {
    uint32_t b = s[i];
    if (b < 0x80) { *w = 1; return b; }
    if (b < 0xE0) { *w = 2; return ((b & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu); }
    if (b < 0xF0) { *w = 3; return ((b & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu); }
    *w = 4;
    return ((b & 0x07u) << 18) | ((s[i + 1] & 0x3Fu) << 12) | ((s[i + 2] & 0x3Fu) << 6) | (s[i + 3] & 0x3Fu);
}

/* The classes of the code point at byte i (0 at the end of the text). */
static inline int cls_at(const Text *t, Py_ssize_t i, int *w) {
    if (i >= t->n) { *w = 0; return 0; }
    return t->classes[decode(t->s, i, w)];
}

/* The end of the run of code points from byte i whose classes meet mask. */
static inline Py_ssize_t run(const Text *t, Py_ssize_t i, int mask) {
    int w;
    while (i < t->n && (cls_at(t, i, &w) & mask)) i += w;
    return i;
}

/* The end of the run of bytes from i that are one of the two (or three) given. */
static inline Py_ssize_t byte_run(const Text *t, Py_ssize_t i, int a, int b, int c) {
    while (i < t->n && (t->s[i] == a || t->s[i] == b || t->s[i] == c)) i++;
    return i;
}

/* A contraction at byte i: "'" then s|d|m|t or ll|ve|re (case-insensitively when
 * icase, where U+017F LATIN SMALL LETTER LONG S folds to s, as in both regex engines).
 * Returns its length in bytes, or 0. */
static Py_ssize_t contraction(const Text *t, Py_ssize_t i, int icase) {
    if (i + 1 >= t->n || t->s[i] != '\'') return 0;
    int w1, w2;
    uint32_t c1 = decode(t->s, i + 1, &w1);
    if (icase) {
        if (c1 >= 'A' && c1 <= 'Z') c1 += 32;
        else if (c1 == 0x17F) c1 = 's';
    }
    if (c1 == 's' || c1 == 'd' || c1 == 'm' || c1 == 't') return 1 + w1;
    if (c1 != 'l' && c1 != 'v' && c1 != 'r') return 0;
    if (i + 1 + w1 >= t->n) return 0;
    uint32_t c2 = decode(t->s, i + 1 + w1, &w2);
    if (icase && c2 >= 'A' && c2 <= 'Z') c2 += 32;
    if ((c1 == 'l' && c2 == 'l') || (c1 != 'l' && c2 == 'e')) return 1 + w1 + w2;
    return 0;
}

/* A whitespace run from byte i (its first code point is \s), as the patterns' tails
 * read it: *end is the run's end, *last the start of its last code point, and the
 * return value the end of its last \r or \n, or -1 when it holds none. */
static Py_ssize_t space_run(const Text *t, Py_ssize_t i, Py_ssize_t *end, Py_ssize_t *last) {
    Py_ssize_t newline = -1;
    int w;
    *last = i;
    while (i < t->n && (cls_at(t, i, &w) & C_S)) {
        if (t->s[i] == '\r' || t->s[i] == '\n') newline = i + 1;
        *last = i;
        i += w;
    }
    *end = i;
    return newline;
}

/* ------------------------------------------------------------------ splitting */

/* GPT-2 (r50k_base, p50k_base, tokenizers' ByteLevel):
 *   '(?:[sdmt]|ll|ve|re) | ?\p{L}++ | ?\p{N}++ | ?[^\s\p{L}\p{N}]++ | \s++$ | \s+(?!\S) | \s
 * The end of the piece that starts at byte i (< n). */
static Py_ssize_t split_gpt2(const Text *t, Py_ssize_t i) {
    int w, w2;
    int k = cls_at(t, i, &w);
    Py_ssize_t m = contraction(t, i, 0);
    if (m) return i + m;
    Py_ssize_t j = i;
    if (t->s[i] == ' ') {
        int k2 = cls_at(t, i + 1, &w2);
        if (w2 && !(k2 & C_S)) { j = i + 1; k = k2; } /* " ?" before a letter, digit or other */
    }
    if (!(k & C_S)) {
        /* The run of one class: letters, digits, or neither (and no whitespace). */
        if (k & C_L) return run(t, j, C_L);
        if (k & C_N) return run(t, j, C_N);
        while (j < t->n && !(cls_at(t, j, &w) & (C_L | C_N | C_S))) j += w;
        return j;
    }
    Py_ssize_t end, last;
    space_run(t, i, &end, &last);
    if (end == t->n) return end;   /* \s++$ */
    if (last > i) return last;     /* \s+(?!\S): all but the last */
    return end;                    /* \s */
}

/* The alternatives cl100k_base, Llama 3 and o200k_base share after their letter ones,
 * from byte i (classes k, width w):
 *   \p{N}{1,3} | ?[^\s\p{L}\p{N}]+[\r\n<tail>]* | [\s++$] | \s*[\r\n]+ | \s+(?!\S) | \s+
 * tail: '/' for o200k_base ('\n' adds nothing for the others); end_first: \s++$ comes
 * first (cl100k_base). \s*[\r\n] and \s*[\r\n]+ end alike, after the run's last newline. */
static Py_ssize_t split_rest(const Text *t, Py_ssize_t i, int k, int w, int tail, int end_first) {
    int w2;
    uint8_t c = t->s[i];
    int k2 = cls_at(t, i + w, &w2);
    if (k & C_N) {
        Py_ssize_t j = i + w;
        for (int count = 1; count < 3 && (k2 & C_N); count++) {
            j += w2;
            k2 = cls_at(t, j, &w2);
        }
        return j;
    }
    Py_ssize_t j = -1;
    if (c == ' ' && w2 && !(k2 & (C_L | C_N | C_S))) j = i + 1;
    else if (!(k & (C_L | C_N | C_S))) j = i;
    if (j >= 0) {
        while (j < t->n && !(cls_at(t, j, &w) & (C_L | C_N | C_S))) j += w;
        return byte_run(t, j, '\r', '\n', tail);
    }
    Py_ssize_t end, last;
    Py_ssize_t newline = space_run(t, i, &end, &last);
    if (end_first && end == t->n) return end; /* \s++$ */
    if (newline >= 0) return newline;         /* \s*[\r\n]+ */
    if (end == t->n) return end;              /* \s+(?!\S) at the end */
    if (last > i) return last;                /* \s+(?!\S) */
    return end;                               /* \s+ */
}

/* cl100k_base:
 *   '(?i:[sdmt]|ll|ve|re) | [^\r\n\p{L}\p{N}]?+\p{L}++ | \p{N}{1,3}+ | ?[^\s\p{L}\p{N}]++[\r\n]*+
 *   | \s++$ | \s*[\r\n] | \s+(?!\S) | \s
 * Llama 3 (llama3): the same but for \s++$ (absent) and \s*[\r\n]+ (the same end as
 * \s*[\r\n]: the run's last newline), so a whitespace run that ends the text and holds
 * a newline stops after it there. */
static Py_ssize_t split_cl100k(const Text *t, Py_ssize_t i, int llama3) {
    int w, w2;
    int k = cls_at(t, i, &w);
    uint8_t c = t->s[i];
    Py_ssize_t m = contraction(t, i, 1);
    if (m) return i + m;
    if (k & C_L) return run(t, i, C_L);
    int k2 = cls_at(t, i + w, &w2);
    int prefix = c != '\r' && c != '\n' && !(k & (C_L | C_N));
    if (prefix && (k2 & C_L)) return run(t, i + w, C_L); /* one non-letter, then letters */
    return split_rest(t, i, k, w, '\n', !llama3);
}

/* o200k_base's first two alternatives from byte j (after the optional prefix):
 *   upper: [U]*[W]+ ;  otherwise: [U]+[W]* ; then (?i:'s|'t|'re|'ve|'m|'ll|'d)?
 * (U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W = [\p{Ll}\p{Lm}\p{Lo}\p{M}]). Returns the end,
 * or -1 when the alternative fails from j. [U]* gives back code points one at a time
 * when [W]+ fails after it, so the match then ends after the run's last W. */
static Py_ssize_t o200k_word(const Text *t, Py_ssize_t j, int first) {
    int w;
    Py_ssize_t k = j, last_w_end = -1;
    while (k < t->n) {
        int kk = cls_at(t, k, &w);
        if (!(kk & C_U)) break;
        if (kk & C_W) last_w_end = k + w;
        k += w;
    }
    Py_ssize_t e;
    if (first) {
        if (cls_at(t, k, &w) & C_W) e = run(t, k, C_W);
        else if (last_w_end >= 0) e = last_w_end;
        else return -1;
    } else {
        if (k == j) return -1;
        e = run(t, k, C_W);
    }
    return e + contraction(t, e, 1);
}

/* o200k_base:
 *   [^\r\n\p{L}\p{N}]?[U]*[W]+(?i:'s|...)? | [^\r\n\p{L}\p{N}]?[U]+[W]*(?i:'s|...)?
 *   | \p{N}{1,3} | ?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+ */
static Py_ssize_t split_o200k(const Text *t, Py_ssize_t i) {
    int w;
    int k = cls_at(t, i, &w);
    uint8_t c = t->s[i];
    int prefix = c != '\r' && c != '\n' && !(k & (C_L | C_N));
    Py_ssize_t e;
    for (int first = 1; first >= 0; first--) {
        /* The optional prefix is tried taken, then not, within each alternative. */
        if (prefix && (e = o200k_word(t, i + w, first)) >= 0) return e;
        if ((k & (C_U | C_W)) && (e = o200k_word(t, i, first)) >= 0) return e;
    }
    return split_rest(t, i, k, w, '/', 0);
}

static inline Py_ssize_t split_next(int kind, const Text *t, Py_ssize_t i) {
    Py_ssize_t end;
    switch (kind) {
    case K_GPT2: end = split_gpt2(t, i); break;
    case K_O200K: end = split_o200k(t, i); break;
    default: end = split_cl100k(t, i, kind == K_LLAMA3); break;
    }
    /* Every branch ends past i (each pattern matches every character); should one not,
     * a one-character piece keeps the loop linear instead of spinning (the tests
     * compare every piece with the regex's, so such a bug shows there). */
    if (end <= i) {
        int w;
        decode(t->s, i, &w);
        end = i + w;
    }
    return end;
}

/* ------------------------------------------------------------------ token table */

static inline uint64_t bytes_hash(const unsigned char *p, Py_ssize_t n) {
    /* 8 bytes a step, then murmur3's finalizer: pieces are short (English ~4 bytes). */
    uint64_t h = (uint64_t)n * 0x9E3779B97F4A7C15ULL;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        h = (h ^ v) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    uint64_t v = 0;
    memcpy(&v, p, (size_t)n);
    h = (h ^ v) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
}

/* The id of the token whose bytes are p[0..n), or -1. */
static inline int64_t token_id(const TextEncoder *e, const unsigned char *p, Py_ssize_t n) {
    uint64_t h = bytes_hash(p, n);
    uint32_t tag = (uint32_t)(h >> 32);
    uint64_t i = h & e->token_mask;
    for (;;) {
        const TokenSlot *s = &e->tokens[i];
        if (s->len == 0) return -1;
        if (s->tag == tag && s->len == (uint32_t)n && memcmp(e->arena + s->offset, p, (size_t)n) == 0) return s->id;
        i = (i + 1) & e->token_mask;
    }
}

/* Fill the token table from a dict of bytes -> id; -1 with a Python error set. */
static int build_tokens(TextEncoder *e, PyObject *whole) {
    Py_ssize_t count = PyDict_Size(whole), total = 0, pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(whole, &pos, &key, &value)) {
        if (!PyBytes_Check(key) || !PyLong_Check(value)) {
            PyErr_SetString(PyExc_TypeError, "TextEncoder expects a dict of bytes to int");
            return -1;
        }
        total += PyBytes_GET_SIZE(key);
    }
    if (total >= 0xFFFFFFFFLL || count >= 0x3FFFFFFFLL) {
        PyErr_SetString(PyExc_OverflowError, "vocabulary too large");
        return -1;
    }
    uint64_t size = 16;
    while (size < (uint64_t)count * 2 + 16) size <<= 1;
    e->tokens = PyMem_Calloc(size, sizeof(TokenSlot));
    e->arena = PyMem_Malloc((size_t)total + 1);
    if (!e->tokens || !e->arena) { PyErr_NoMemory(); return -1; }
    e->token_mask = size - 1;
    Py_ssize_t used = 0;
    pos = 0;
    while (PyDict_Next(whole, &pos, &key, &value)) {
        long long id = PyLong_AsLongLong(value);
        if (id == -1 && PyErr_Occurred()) return -1;
        if (id < 0 || id > 0xFFFFFFFFLL) { PyErr_Format(PyExc_OverflowError, "token id %lld out of range", id); return -1; }
        Py_ssize_t n = PyBytes_GET_SIZE(key);
        if (n == 0) continue;
        const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(key);
        uint64_t h = bytes_hash(p, n);
        uint64_t i = h & e->token_mask;
        int replaced = 0;
        while (e->tokens[i].len) {
            TokenSlot *s = &e->tokens[i];
            if (s->len == (uint32_t)n && memcmp(e->arena + s->offset, p, (size_t)n) == 0) {
                /* Two ids for one spelling: the lower wins, as the pure path's dict
                 * built in id order would keep the first. */
                if ((uint32_t)id < s->id) s->id = (uint32_t)id;
                replaced = 1;
                break;
            }
            i = (i + 1) & e->token_mask;
        }
        if (replaced) continue;
        memcpy(e->arena + used, p, (size_t)n);
        TokenSlot slot = {(uint32_t)(h >> 32), (uint32_t)n, (uint32_t)used, (uint32_t)id};
        e->tokens[i] = slot;
        used += n;
    }
    return 0;
}

/* ------------------------------------------------------------------ encoding */

/* Append the ids of piece p[0..n) at out; returns how many, or -1 (out of memory). */
static inline Py_ssize_t encode_piece(TextEncoder *e, const unsigned char *p, Py_ssize_t n, uint32_t *out) {
    if (n == 1) { out[0] = e->byte_ids[p[0]]; return 1; }
    if (e->tokens) {
        int64_t id = token_id(e, p, n);
        if (id >= 0) { out[0] = (uint32_t)id; return 1; }
    }
    /* out has room for n ids (a piece has at most one id a byte): merge there. */
    PieceCache *c = &e->cache;
    uint64_t h = 0;
    if (n <= CACHE_KEY_MAX) {
        h = bytes_hash(p, n) | 1; /* never 0, the free mark */
        Py_ssize_t got = cache_get(c, h, p, n, out);
        if (got >= 0) return got;
    }
    for (Py_ssize_t i = 0; i < n; i++) out[i] = e->byte_ids[p[i]];
    Py_ssize_t m = ts_merge_symbols(e->table, out, n);
    if (m > 0 && n <= CACHE_KEY_MAX) cache_put(c, h, p, n, out, m);
    return m;
}

/* The ids of s[0..n) into out (room for n); returns how many, or -1 (out of memory). */
static Py_ssize_t encode_all(TextEncoder *e, const uint8_t *s, Py_ssize_t n, uint32_t *out) {
    Text t = {s, n, e->classes};
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < n;) {
        Py_ssize_t end = split_next(e->kind, &t, i);
        Py_ssize_t got = encode_piece(e, s + i, end - i, out + count);
        if (got < 0) return -1;
        count += got;
        i = end;
    }
    return count;
}

/* The pieces' byte ends of s[0..n) into ends (room for n); returns how many. */
static Py_ssize_t split_all(int kind, const uint8_t *classes, const uint8_t *s, Py_ssize_t n, Py_ssize_t *ends) {
    Text t = {s, n, classes};
    Py_ssize_t count = 0;
    for (Py_ssize_t i = 0; i < n;) {
        i = split_next(kind, &t, i);
        ends[count++] = i;
    }
    return count;
}

/* The text's UTF-8 as a new bytes object (UnicodeEncodeError on a lone surrogate, as
 * the pure path's str.encode raises), or a new reference to its own data when ASCII. */
static PyObject *utf8_of(PyObject *text, const uint8_t **s, Py_ssize_t *n) {
    if (!PyUnicode_Check(text)) { PyErr_SetString(PyExc_TypeError, "expected a str"); return NULL; }
    if (PyUnicode_IS_ASCII(text)) {
        *s = (const uint8_t *)PyUnicode_DATA(text);
        *n = PyUnicode_GET_LENGTH(text);
        Py_INCREF(text);
        return text;
    }
    PyObject *b = PyUnicode_AsUTF8String(text);
    if (!b) return NULL;
    *s = (const uint8_t *)PyBytes_AS_STRING(b);
    *n = PyBytes_GET_SIZE(b);
    return b;
}

static PyObject *ids_list(const uint32_t *ids, Py_ssize_t n) {
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyLong_FromUnsignedLong(ids[i]);
        if (!v) { Py_DECREF(list); return NULL; }
        PyList_SET_ITEM(list, i, v);
    }
    return list;
}

/* Run encode_all, without the GIL for long texts; -1 with MemoryError set. */
static Py_ssize_t encode_text(TextEncoder *e, const uint8_t *s, Py_ssize_t n, uint32_t *ids) {
    Py_ssize_t got;
    if (n >= NOGIL_MIN) {
        Py_BEGIN_ALLOW_THREADS
        got = encode_all(e, s, n, ids);
        Py_END_ALLOW_THREADS
    } else {
        got = encode_all(e, s, n, ids);
    }
    if (got < 0) PyErr_NoMemory();
    return got;
}

/* The ids of text as a list, or their count when count_only. */
static PyObject *encode_or_count(TextEncoder *self, PyObject *text, int count_only) {
    const uint8_t *s;
    Py_ssize_t n;
    PyObject *keep = utf8_of(text, &s, &n);
    if (!keep) return NULL;
    uint32_t small[256];
    uint32_t *ids = n <= 256 ? small : PyMem_Malloc((size_t)n * sizeof(uint32_t));
    PyObject *out = NULL;
    if (!ids) { PyErr_NoMemory(); goto done; }
    Py_ssize_t got = encode_text(self, s, n, ids);
    if (got >= 0) out = count_only ? PyLong_FromSsize_t(got) : ids_list(ids, got);
done:
    if (ids != small) PyMem_Free(ids);
    Py_DECREF(keep);
    return out;
}

static PyObject *TextEncoder_encode(TextEncoder *self, PyObject *text) { return encode_or_count(self, text, 0); }

static PyObject *TextEncoder_count(TextEncoder *self, PyObject *text) { return encode_or_count(self, text, 1); }

/* split(text): the pieces as str (the oracle's findall, for tests and the stream). */
static PyObject *TextEncoder_split(TextEncoder *self, PyObject *text) {
    const uint8_t *s;
    Py_ssize_t n;
    PyObject *keep = utf8_of(text, &s, &n);
    if (!keep) return NULL;
    PyObject *out = NULL;
    Py_ssize_t *ends = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
    if (!ends) { PyErr_NoMemory(); goto done; }
    Py_ssize_t count = split_all(self->kind, self->classes, s, n, ends);
    out = PyList_New(count);
    if (!out) goto done;
    for (Py_ssize_t i = 0, start = 0; i < count; start = ends[i++]) {
        PyObject *piece = PyUnicode_DecodeUTF8((const char *)s + start, ends[i] - start, "strict");
        if (!piece) { Py_CLEAR(out); goto done; }
        PyList_SET_ITEM(out, i, piece);
    }
done:
    PyMem_Free(ends);
    Py_DECREF(keep);
    return out;
}

/* ------------------------------------------------------------------ construction */

/* TextEncoder(kind, table, whole, classes): kind 0-3 (GPT-2, cl100k_base, Llama 3,
 * o200k_base); table a PairTable whose 256 byte ids are all set; whole a dict of
 * token bytes -> id (or None: every piece is merged); classes the 0x110000 class bytes. */
static PyObject *TextEncoder_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    int kind;
    PyObject *table, *whole, *classes;
    static char *names[] = {"kind", "table", "whole", "classes", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iO!OO!:TextEncoder", names, &kind, &ts_PairTableType, &table, &whole,
                                     &PyBytes_Type, &classes))
        return NULL;
    if (kind < K_GPT2 || kind > K_O200K) { PyErr_Format(PyExc_ValueError, "unknown pattern kind %d", kind); return NULL; }
    if (PyBytes_GET_SIZE(classes) != 0x110000) {
        PyErr_SetString(PyExc_ValueError, "classes must hold one byte for each of the 0x110000 code points");
        return NULL;
    }
    if (whole != Py_None && !PyDict_Check(whole)) {
        PyErr_SetString(PyExc_TypeError, "whole must be a dict of bytes to int, or None");
        return NULL;
    }
    const PairTable *pt = (const PairTable *)table;
    for (int b = 0; b < 256; b++) {
        if (pt->byte_ids[b] < 0) {
            PyErr_Format(PyExc_ValueError, "byte 0x%02x has no token: the text encoder needs all 256", b);
            return NULL;
        }
    }
    TextEncoder *e = (TextEncoder *)type->tp_alloc(type, 0);
    if (!e) return NULL;
    e->kind = kind;
    e->tokens = NULL;
    e->arena = NULL;
    memset(&e->cache, 0, sizeof e->cache);
    Py_INCREF(table);
    e->table_obj = table;
    e->table = pt;
    Py_INCREF(classes);
    e->classes_obj = classes;
    e->classes = (const uint8_t *)PyBytes_AS_STRING(classes);
    for (int b = 0; b < 256; b++) e->byte_ids[b] = (uint32_t)pt->byte_ids[b];
    if (cache_init(&e->cache) < 0 || (whole != Py_None && build_tokens(e, whole) < 0)) {
        Py_DECREF(e);
        return NULL;
    }
    return (PyObject *)e;
}

static void TextEncoder_dealloc(TextEncoder *self) {
    cache_free(&self->cache);
    PyMem_Free(self->tokens);
    PyMem_Free(self->arena);
    Py_XDECREF(self->table_obj);
    Py_XDECREF(self->classes_obj);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef TextEncoder_methods[] = {
    {"encode", (PyCFunction)TextEncoder_encode, METH_O, "encode(text): the ids of text (no special tokens)."},
    {"count", (PyCFunction)TextEncoder_count, METH_O, "count(text): len(encode(text)), without the list."},
    {"split", (PyCFunction)TextEncoder_split, METH_O, "split(text): the pre-tokenizer's pieces of text."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject ts_TextEncoderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tokstream._native.TextEncoder",
    .tp_basicsize = sizeof(TextEncoder),
    .tp_dealloc = (destructor)TextEncoder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A whole text to ids for a named pre-tokenizer pattern: split, token lookup, merge.",
    .tp_methods = TextEncoder_methods,
    .tp_new = TextEncoder_new,
};
