/* tokstream._native.chain_keys: the prefix-cache planner's chained block keys in one C
 * call (cache/planner.py keeps the hashlib loop as the oracle and the fallback).
 *
 * Key b is sha256(parent || extra || block b's ids as little-endian uint32), parent the
 * previous key's digest (the planner's seed for b = 0), returned as 64 hex digits.
 *
 * Cost: two SHA-256 compressions a key for 16-id blocks; with the CPU's SHA extensions
 * (x86 SHA-NI, checked at run time with cpuid) ~0.1 us a key, else the portable
 * compression (~0.5 us a key). The hashing runs without the GIL. hashlib's loop costs
 * ~0.6-0.9 us a key, nearly all of it the Python calls around OpenSSL.
 */
#include "_native.h"
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_SHANI_BUILD 1
#include <cpuid.h>
#include <immintrin.h>
#endif

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};
static const uint32_t H256[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

/* FIPS 180-4, as written there: the oracle-near path for CPUs without SHA extensions. */
static void compress_portable(uint32_t st[8], const uint8_t *p, size_t blocks) {
    for (; blocks--; p += 64) {
        uint32_t w[64];
        for (int i = 0; i < 16; i++)
            w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
        for (int i = 16; i < 64; i++) {
            uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
            uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        uint32_t a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
        for (int i = 0; i < 64; i++) {
            uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
            uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
        }
        st[0] += a; st[1] += b; st[2] += c; st[3] += d; st[4] += e; st[5] += f; st[6] += g; st[7] += h;
    }
}

#ifdef HAVE_SHANI_BUILD
/* The same compression on SHA-NI: four rounds per step, the message schedule in
 * registers (W[i] for i >= 4 from the four before it by sha256msg1/msg2). */
__attribute__((target("sha,sse4.1,ssse3"))) static void compress_shani(uint32_t st[8], const uint8_t *p,
                                                                       size_t blocks) {
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_loadu_si128((const __m128i *)&st[0]);
    __m128i state1 = _mm_loadu_si128((const __m128i *)&st[4]);
    tmp = _mm_shuffle_epi32(tmp, 0xB1);                 /* CDAB */
    state1 = _mm_shuffle_epi32(state1, 0x1B);           /* EFGH */
    __m128i state0 = _mm_alignr_epi8(tmp, state1, 8);   /* ABEF */
    state1 = _mm_blend_epi16(state1, tmp, 0xF0);        /* CDGH */
    for (; blocks--; p += 64) {
        __m128i abef = state0, cdgh = state1, w[4];
        for (int i = 0; i < 16; i++) {
            __m128i wi;
            if (i < 4) {
                wi = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), swap);
            } else {
                __m128i t = _mm_sha256msg1_epu32(w[i & 3], w[(i + 1) & 3]);
                t = _mm_add_epi32(t, _mm_alignr_epi8(w[(i + 3) & 3], w[(i + 2) & 3], 4));
                wi = _mm_sha256msg2_epu32(t, w[(i + 3) & 3]);
            }
            w[i & 3] = wi;
            __m128i msg = _mm_add_epi32(wi, _mm_loadu_si128((const __m128i *)&K256[4 * i]));
            state1 = _mm_sha256rnds2_epu32(state1, state0, msg);
            msg = _mm_shuffle_epi32(msg, 0x0E);
            state0 = _mm_sha256rnds2_epu32(state0, state1, msg);
        }
        state0 = _mm_add_epi32(state0, abef);
        state1 = _mm_add_epi32(state1, cdgh);
    }
    tmp = _mm_shuffle_epi32(state0, 0x1B);              /* FEBA */
    state1 = _mm_shuffle_epi32(state1, 0xB1);           /* DCHG */
    state0 = _mm_blend_epi16(tmp, state1, 0xF0);        /* DCBA */
    state1 = _mm_alignr_epi8(state1, tmp, 8);           /* HGFE */
    _mm_storeu_si128((__m128i *)&st[0], state0);
    _mm_storeu_si128((__m128i *)&st[4], state1);
}

/* Whether the CPU has SHA-NI (and the SSE it needs). Asked once: cpuid traps to the
 * hypervisor on a virtual machine (~microseconds). A race only asks twice. */
static int shani_known = -1;

static int has_shani(void) {
    if (shani_known >= 0) return shani_known;
    unsigned a, b, c, d;
    shani_known = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 19)) || !(c & (1u << 9))) return 0; /* SSE4.1, SSSE3 */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    shani_known = (int)((b >> 29) & 1); /* SHA */
    return shani_known;
}
#endif

typedef void (*Compress)(uint32_t st[8], const uint8_t *p, size_t blocks);

/* SHA-256 of msg[0..n), whose buffer has room for the padding (n + 72 bytes). */
static void sha256_padded(Compress compress, uint8_t *msg, size_t n, uint8_t out[32]) {
    uint32_t st[8];
    memcpy(st, H256, sizeof st);
    size_t total = (n + 9 + 63) / 64 * 64;
    msg[n] = 0x80;
    memset(msg + n + 1, 0, total - n - 9);
    uint64_t bits = (uint64_t)n * 8;
    for (int i = 0; i < 8; i++) msg[total - 1 - i] = (uint8_t)(bits >> (8 * i));
    compress(st, msg, total / 64);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(st[i] >> 24);
        out[4 * i + 1] = (uint8_t)(st[i] >> 16);
        out[4 * i + 2] = (uint8_t)(st[i] >> 8);
        out[4 * i + 3] = (uint8_t)st[i];
    }
}

/* chain_keys(seed, extra, data, block_bytes, count, portable=False) -> list[str] */
PyObject *ts_chain_keys(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kw) {
    Py_buffer seed, extra, data;
    Py_ssize_t block_bytes, count;
    int portable = 0;
    static char *names[] = {"seed", "extra", "data", "block_bytes", "count", "portable", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*y*y*nn|p:chain_keys", names, &seed, &extra, &data, &block_bytes,
                                     &count, &portable))
        return NULL;
    PyObject *out = NULL;
    uint8_t *msg = NULL, *digests = NULL;
    if (block_bytes < 0 || count < 0 || (count && block_bytes > data.len / count) || seed.len > (1 << 20) ||
        extra.len > (1 << 20) || block_bytes > (1 << 24)) {
        PyErr_SetString(PyExc_ValueError, "chain_keys: data holds fewer than count blocks, or a size is out of range");
        goto done;
    }
    Py_ssize_t head = seed.len > 32 ? seed.len : 32;
    msg = PyMem_Malloc((size_t)(head + extra.len + block_bytes + 72));
    digests = PyMem_Malloc((size_t)(count ? count : 1) * 32);
    if (!msg || !digests) { PyErr_NoMemory(); goto done; }
    Compress compress = compress_portable;
#ifdef HAVE_SHANI_BUILD
    if (!portable && has_shani()) compress = compress_shani;
#endif
    Py_BEGIN_ALLOW_THREADS
    const uint8_t *parent = seed.buf;
    size_t plen = (size_t)seed.len;
    for (Py_ssize_t b = 0; b < count; b++) {
        memcpy(msg, parent, plen);
        memcpy(msg + plen, extra.buf, (size_t)extra.len);
        memcpy(msg + plen + extra.len, (const uint8_t *)data.buf + b * block_bytes, (size_t)block_bytes);
        sha256_padded(compress, msg, plen + (size_t)extra.len + (size_t)block_bytes, digests + 32 * b);
        parent = digests + 32 * b;
        plen = 32;
    }
    Py_END_ALLOW_THREADS
    out = PyList_New(count);
    if (!out) goto done;
    static const char hex[] = "0123456789abcdef";
    for (Py_ssize_t b = 0; b < count; b++) {
        PyObject *s = PyUnicode_New(64, 127);
        if (!s) { Py_CLEAR(out); goto done; }
        Py_UCS1 *w = PyUnicode_1BYTE_DATA(s);
        for (int i = 0; i < 32; i++) {
            w[2 * i] = (Py_UCS1)hex[digests[32 * b + i] >> 4];
            w[2 * i + 1] = (Py_UCS1)hex[digests[32 * b + i] & 15];
        }
        PyList_SET_ITEM(out, b, s);
    }
done:
    PyMem_Free(msg);
    PyMem_Free(digests);
    PyBuffer_Release(&seed);
    PyBuffer_Release(&extra);
    PyBuffer_Release(&data);
    return out;
}

/* sha_extensions(): whether chain_keys runs on the CPU's SHA extensions. */
PyObject *ts_sha_extensions(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored)) {
#ifdef HAVE_SHANI_BUILD
    return PyBool_FromLong(has_shani());
#else
    Py_RETURN_FALSE;
#endif
}
