/* C helpers of the compiled core (arena_sdk/engine/_core.pyx).
 *
 * - The Mersenne Twister of CPython's random.Random, read and advanced in
 *   place, so the core draws exactly the numbers random.Random would
 *   (random(), getrandbits(k), _randbelow(n)).  The core checks at import that
 *   the object layout and the numbers match this interpreter's; if they do not
 *   it calls the generator's methods instead.
 * - SHA-256 (FIPS 180-4), for the seeded shuffles of arena_sdk.engine.chance.
 * - Division of a 256-bit number by a 64-bit one, for the mixed-radix digits
 *   of a shuffle.
 */
#ifndef ARENA_CORE_C_H
#define ARENA_CORE_C_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------ Mersenne Twister */

#define ARENA_MT_N 624
#define ARENA_MT_M 397

typedef struct {
    PyObject_HEAD
    int index;
    uint32_t state[ARENA_MT_N];
} arena_mt;

static inline uint32_t arena_mt_next(arena_mt *self) {
    static const uint32_t mag01[2] = {0x0U, 0x9908b0dfU};
    uint32_t y;
    uint32_t *mt = self->state;
    if (self->index >= ARENA_MT_N) {
        int kk;
        for (kk = 0; kk < ARENA_MT_N - ARENA_MT_M; kk++) {
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
            mt[kk] = mt[kk + ARENA_MT_M] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        for (; kk < ARENA_MT_N - 1; kk++) {
            y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
            mt[kk] = mt[kk + (ARENA_MT_M - ARENA_MT_N)] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        y = (mt[ARENA_MT_N - 1] & 0x80000000U) | (mt[0] & 0x7fffffffU);
        mt[ARENA_MT_N - 1] = mt[ARENA_MT_M - 1] ^ (y >> 1) ^ mag01[y & 0x1U];
        self->index = 0;
    }
    y = mt[self->index++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
}

/* random.Random.random() */
static inline double arena_mt_random(arena_mt *self) {
    uint32_t a = arena_mt_next(self) >> 5, b = arena_mt_next(self) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

/* random.Random.getrandbits(k) for 1 <= k <= 64 (words least significant first). */
static inline uint64_t arena_mt_bits(arena_mt *self, int k) {
    if (k <= 32) return arena_mt_next(self) >> (32 - k);
    uint64_t lo = arena_mt_next(self);
    uint64_t hi = arena_mt_next(self) >> (64 - k);
    return lo | (hi << 32);
}

/* random.Random._randbelow(n) for 1 <= n < 2**64. */
static inline uint64_t arena_mt_below(arena_mt *self, uint64_t n) {
    int k = 64 - __builtin_clzll(n);
    uint64_t r = arena_mt_bits(self, k);
    while (r >= n) r = arena_mt_bits(self, k);
    return r;
}

/* ------------------------------------------------------------ bits */

/* Population count: the instruction where the build targets it, else a few shifts (no library call). */
static inline int arena_popcount(uint64_t x) {
#if defined(__POPCNT__)
    return __builtin_popcountll(x);
#else
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
#endif
}

/* ------------------------------------------------------------ SHA-256 */

static const uint32_t arena_sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ARENA_ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void arena_sha_block(uint32_t h[8], const unsigned char *p) {
    uint32_t w[64], a, b, c, d, e, f, g, hh, t1, t2;
    int i;
    for (i = 0; i < 16; i++)
        w[i] = ((uint32_t)p[4 * i] << 24) | ((uint32_t)p[4 * i + 1] << 16) |
               ((uint32_t)p[4 * i + 2] << 8) | (uint32_t)p[4 * i + 3];
    for (i = 16; i < 64; i++) {
        uint32_t s0 = ARENA_ROR(w[i - 15], 7) ^ ARENA_ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ARENA_ROR(w[i - 2], 17) ^ ARENA_ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = h[0]; b = h[1]; c = h[2]; d = h[3]; e = h[4]; f = h[5]; g = h[6]; hh = h[7];
    for (i = 0; i < 64; i++) {
        t1 = hh + (ARENA_ROR(e, 6) ^ ARENA_ROR(e, 11) ^ ARENA_ROR(e, 25)) + ((e & f) ^ (~e & g)) +
             arena_sha_k[i] + w[i];
        t2 = (ARENA_ROR(a, 2) ^ ARENA_ROR(a, 13) ^ ARENA_ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

/* SHA-256 of data[0:len] as four 64-bit words, most significant first (the digest read big-endian). */
static void arena_sha256_words(const unsigned char *data, Py_ssize_t len, uint64_t out[4]) {
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    unsigned char block[64];
    Py_ssize_t done = 0;
    uint64_t bits = (uint64_t)len * 8;
    int i;
    while (len - done >= 64) {
        arena_sha_block(h, data + done);
        done += 64;
    }
    Py_ssize_t rest = len - done;
    memset(block, 0, 64);
    memcpy(block, data + done, (size_t)rest);
    block[rest] = 0x80;
    if (rest >= 56) {
        arena_sha_block(h, block);
        memset(block, 0, 64);
    }
    for (i = 0; i < 8; i++) block[63 - i] = (unsigned char)(bits >> (8 * i));
    arena_sha_block(h, block);
    for (i = 0; i < 4; i++) out[i] = ((uint64_t)h[2 * i] << 32) | h[2 * i + 1];
}

/* ------------------------------------------------------------ 256-bit division */

/* (hi:lo) // d and (hi:lo) % d, for hi < d (the quotient fits in 64 bits). */
static inline uint64_t arena_div128(uint64_t hi, uint64_t lo, uint64_t d, uint64_t *rem) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    uint64_t q, r;
    __asm__("divq %4" : "=a"(q), "=d"(r) : "a"(lo), "d"(hi), "rm"(d));
    *rem = r;
    return q;
#else
    unsigned __int128 cur = ((unsigned __int128)hi << 64) | lo;
    *rem = (uint64_t)(cur % d);
    return (uint64_t)(cur / d);
#endif
}

/* x (four words, most significant first) becomes x // d; returns x % d.  d > 0. */
static inline uint64_t arena_divmod256(uint64_t x[4], uint64_t d) {
    uint64_t r = 0;
    int i;
    for (i = 0; i < 4; i++) {
        if (r == 0 && x[i] < d) {  /* a leading zero digit of the quotient */
            r = x[i];
            x[i] = 0;
            continue;
        }
        x[i] = arena_div128(r, x[i], d, &r);
    }
    return r;
}

/* ------------------------------------------------------------ object helpers */

/* tuple.__new__(cls, items) for a named tuple (a tuple subclass without a __dict__), built in place. */
static inline PyObject *arena_subtuple(PyObject *cls, PyObject *items) {
    Py_ssize_t n = PyTuple_GET_SIZE(items), i;
    PyObject *out = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, n);
    if (!out) return NULL;
    for (i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(items, i);
        Py_INCREF(item);
        PyTuple_SET_ITEM(out, i, item);
    }
    return out;
}

/* A named tuple of three fields, built in place. */
static inline PyObject *arena_named3(PyObject *cls, PyObject *a, PyObject *b, PyObject *c) {
    PyObject *out = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 3);
    if (!out) return NULL;
    Py_INCREF(a); PyTuple_SET_ITEM(out, 0, a);
    Py_INCREF(b); PyTuple_SET_ITEM(out, 1, b);
    Py_INCREF(c); PyTuple_SET_ITEM(out, 2, c);
    return out;
}

/* A frozen dataclass instance from its field dict (arena_sdk.engine.scoring.frozen in C). */
static PyObject *arena_frozen(PyObject *cls, PyObject *fields) {
    PyObject *empty = PyTuple_New(0);
    if (!empty) return NULL;
    PyObject *obj = PyBaseObject_Type.tp_new((PyTypeObject *)cls, empty, NULL);
    Py_DECREF(empty);
    if (!obj) return NULL;
    if (PyObject_GenericSetDict(obj, fields, NULL) < 0) {
        Py_DECREF(obj);
        return NULL;
    }
    return obj;
}

#endif
