/* tokstream._native.TokenTrie: the vocabulary's byte trie walked through a lazy DFA.
 *
 * The pure path (constrain/grammar/walker.py: Walker._walk_narrow and _walk_numpy) stays
 * the oracle and the fallback; the tests run both against Walker.walk_reference.
 *
 * The trie is the walker's (breadth-first numbering: a node's children are one range
 * [child_lo, child_hi)), copied here as int32 arrays, once per walker. A walk reads the
 * DFA's one-offset table (table[s * 256 + byte] is the next state plus one, 0 dead;
 * automaton.Dfa.walk_arrays), its `expanded` and `accepting` flags, and a list of start
 * (node, state) pairs. Breadth first, per alive child: a node that spells a token is
 * "ended", one in an accepting state with children is a crossing (kept with its state),
 * and one with children is queued. A queued state whose row is not made yet (the DFA is lazy) is not read: the
 * pair goes back to the caller as "pending", which expands those states and walks them
 * again, so the result is the same as one walk over a complete table.
 *
 * With an `allowed` array (one byte per rank), the walk marks the tokens alive to their
 * end there itself (a parser's walk below its crossings: nothing to hand back), and
 * `refused` says which crossings still have a refused token below them.
 *
 * Cost: per alive node, one table load and three flag loads (~3-5 ns); memory, the
 * queue and the outputs (8 bytes per alive node at most). No Python object is touched
 * inside the loop, so it runs without the GIL: a batch's walks on several threads use
 * several cores. The buffers are only read; a table a concurrent expansion replaced is
 * still a valid (older) table, whose missing rows come back as pending.
 */
#include "_native.h"
#include <string.h>

typedef struct {
    PyObject_HEAD
    Py_ssize_t n_nodes;
    uint8_t *byte;
    int32_t *child_lo, *child_hi;
    uint8_t *has_tok, *has_kids;
    Py_ssize_t n_ranks;
    int32_t *tok_lo, *tok_hi, *sub_hi; /* a node's own ranks [tok_lo, tok_hi), all below it [tok_lo, sub_hi) */
} TokenTrie;

typedef struct {
    int64_t *v;
    Py_ssize_t n, cap;
} Vec;

static int vec_push(Vec *a, int64_t x) {
    if (a->n == a->cap) {
        Py_ssize_t cap = a->cap ? a->cap * 2 : 256;
        int64_t *p = realloc(a->v, (size_t)cap * sizeof(int64_t));
        if (!p) return -1;
        a->v = p;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

static PyObject *vec_bytes(Vec *a) {
    return PyBytes_FromStringAndSize((const char *)a->v, a->n * (Py_ssize_t)sizeof(int64_t));
}

static void TokenTrie_dealloc(TokenTrie *self) {
    free(self->byte);
    free(self->child_lo);
    free(self->child_hi);
    free(self->has_tok);
    free(self->has_kids);
    free(self->tok_lo);
    free(self->tok_hi);
    free(self->sub_hi);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* TokenTrie(byte, child_lo, child_hi, has_tok, has_kids, sub_lo, tok_n, sub_hi): the
 * byte and flags as one byte per node, the ranges as int64 (numpy intp) buffers. */
static int copy_ranges(int32_t **out, const Py_buffer *src, Py_ssize_t n, int64_t bound) {
    const int64_t *a = src->buf;
    if (!(*out = malloc((size_t)n * 4))) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (a[i] < 0 || a[i] > bound) {
            PyErr_SetString(PyExc_ValueError, "TokenTrie: a range outside the trie or the ranks");
            return -1;
        }
        (*out)[i] = (int32_t)a[i];
    }
    return 0;
}

static int TokenTrie_init(TokenTrie *self, PyObject *args, PyObject *kwds) {
    Py_buffer b = {0}, lo = {0}, hi = {0}, tok = {0}, kids = {0}, slo = {0}, tn = {0}, shi = {0};
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*", &b, &lo, &hi, &tok, &kids, &slo, &tn, &shi)) return -1;
    int ok = -1;
    Py_ssize_t n = b.len;
    if (lo.len != n * 8 || hi.len != n * 8 || tok.len != n || kids.len != n || slo.len != n * 8 || tn.len != n * 8 ||
        shi.len != n * 8 || n <= 0 || n >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "TokenTrie: arrays of different lengths");
        goto done;
    }
    self->n_nodes = n;
    self->n_ranks = ((const int64_t *)shi.buf)[0]; /* the root holds every rank */
    if (self->n_ranks < 0 || self->n_ranks >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "TokenTrie: too many ranks");
        goto done;
    }
    self->byte = malloc((size_t)n);
    self->has_tok = malloc((size_t)n);
    self->has_kids = malloc((size_t)n);
    if (!self->byte || !self->has_tok || !self->has_kids) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(self->byte, b.buf, (size_t)n);
    memcpy(self->has_tok, tok.buf, (size_t)n);
    memcpy(self->has_kids, kids.buf, (size_t)n);
    if (copy_ranges(&self->child_lo, &lo, n, n) || copy_ranges(&self->child_hi, &hi, n, n) ||
        copy_ranges(&self->tok_lo, &slo, n, self->n_ranks) || copy_ranges(&self->tok_hi, &tn, n, self->n_ranks) ||
        copy_ranges(&self->sub_hi, &shi, n, self->n_ranks))
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        self->tok_hi[i] += self->tok_lo[i]; /* tok_n -> the end of the node's own ranks */
        if (self->child_hi[i] < self->child_lo[i] || self->tok_hi[i] > self->sub_hi[i] ||
            self->tok_lo[i] > self->tok_hi[i]) {
            PyErr_SetString(PyExc_ValueError, "TokenTrie: an empty range reversed");
            goto done;
        }
    }
    ok = 0;
done:
    PyBuffer_Release(&b);
    PyBuffer_Release(&lo);
    PyBuffer_Release(&hi);
    PyBuffer_Release(&tok);
    PyBuffer_Release(&kids);
    PyBuffer_Release(&slo);
    PyBuffer_Release(&tn);
    PyBuffer_Release(&shi);
    return ok;
}

/* walk(table, expanded, accepting, nodes, states, crossings, allowed=None) ->
 *     (ended nodes, crossing (node, state) pairs, pending nodes, pending states), each
 *     int64 bytes. With `allowed` (one writable byte per rank), the ranks of the ended
 *     nodes are set there instead, and no ended nodes are returned.
 * `states` one-offset like the table's; a pending pair's children are not walked. */
static PyObject *TokenTrie_walk(TokenTrie *self, PyObject *args) {
    Py_buffer tb = {0}, eb = {0}, ab = {0}, nb = {0}, sb = {0}, wb = {0};
    int crossings;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*p|w*", &tb, &eb, &ab, &nb, &sb, &crossings, &wb)) return NULL;
    uint8_t *allowed = wb.buf;
    PyObject *out = NULL;
    Vec ended = {0}, found = {0}, pend_n = {0}, pend_s = {0}, queue = {0};
    const int64_t *table = tb.buf;
    const uint8_t *expanded = eb.buf, *accepting = ab.buf;
    Py_ssize_t n_states = eb.len;
    Py_ssize_t n_starts = nb.len / 8;
    int bad = 0, oom = 0;
    if (ab.len != n_states || tb.len != n_states * 256 * 8 || sb.len != nb.len || nb.len % 8 ||
        (allowed && wb.len != self->n_ranks)) {
        PyErr_SetString(PyExc_ValueError, "TokenTrie.walk: the table and flags disagree in size");
        goto done;
    }
    const int64_t *sn = nb.buf, *ss = sb.buf;
    for (Py_ssize_t i = 0; i < n_starts; i++) {
        if (sn[i] < 0 || sn[i] >= self->n_nodes || ss[i] <= 0 || ss[i] >= n_states) {
            PyErr_SetString(PyExc_ValueError, "TokenTrie.walk: a start outside the trie or the table");
            goto done;
        }
        if (vec_push(&queue, sn[i]) || vec_push(&queue, ss[i])) {
            PyErr_NoMemory();
            goto done;
        }
    }
    const uint8_t *byte = self->byte, *has_tok = self->has_tok, *has_kids = self->has_kids;
    const int32_t *child_lo = self->child_lo, *child_hi = self->child_hi, *tok_lo = self->tok_lo, *tok_hi = self->tok_hi;
    Py_BEGIN_ALLOW_THREADS;
    /* The queue holds (node, state) pairs; its head moves on, so it is breadth first. */
    for (Py_ssize_t head = 0; head < queue.n && !bad && !oom; head += 2) {
        int64_t v = queue.v[head], s = queue.v[head + 1];
        if (!expanded[s]) {
            oom |= vec_push(&pend_n, v) | vec_push(&pend_s, s);
            continue;
        }
        const int64_t *row = table + s * 256;
        for (int32_t c = child_lo[v], end = child_hi[v]; c < end; c++) {
            int64_t t = row[byte[c]];
            if (!t) continue;
            if (t < 0 || t >= n_states) {
                bad = 1;
                break;
            }
            if (has_tok[c]) {
                if (allowed)
                    memset(allowed + tok_lo[c], 1, (size_t)(tok_hi[c] - tok_lo[c]));
                else
                    oom |= vec_push(&ended, c);
            }
            if (has_kids[c]) {
                if (crossings && accepting[t]) oom |= vec_push(&found, c) | vec_push(&found, t);
                oom |= vec_push(&queue, c) | vec_push(&queue, t);
            }
        }
    }
    Py_END_ALLOW_THREADS;
    if (oom) {
        PyErr_NoMemory();
        goto done;
    }
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "TokenTrie.walk: the table names a state past its end");
        goto done;
    }
    out = Py_BuildValue("(NNNN)", vec_bytes(&ended), vec_bytes(&found), vec_bytes(&pend_n), vec_bytes(&pend_s));
done:
    free(ended.v);
    free(found.v);
    free(pend_n.v);
    free(pend_s.v);
    free(queue.v);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&eb);
    PyBuffer_Release(&ab);
    PyBuffer_Release(&nb);
    PyBuffer_Release(&sb);
    if (wb.obj) PyBuffer_Release(&wb);
    return out;
}

/* refused(nodes, allowed) -> one byte per node: 1 when a token strictly below it (not
 * its own spelling) is not allowed. Stops at the first such rank. */
static PyObject *TokenTrie_refused(TokenTrie *self, PyObject *args) {
    Py_buffer nb = {0}, wb = {0};
    if (!PyArg_ParseTuple(args, "y*y*", &nb, &wb)) return NULL;
    PyObject *out = NULL;
    Py_ssize_t n = nb.len / 8;
    if (nb.len % 8 || wb.len != self->n_ranks) {
        PyErr_SetString(PyExc_ValueError, "TokenTrie.refused: sizes disagree");
        goto done;
    }
    out = PyBytes_FromStringAndSize(NULL, n);
    if (!out) goto done;
    uint8_t *flag = (uint8_t *)PyBytes_AS_STRING(out);
    const int64_t *nodes = nb.buf;
    const uint8_t *allowed = wb.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t v = nodes[i];
        if (v < 0 || v >= self->n_nodes) {
            Py_CLEAR(out);
            PyErr_SetString(PyExc_ValueError, "TokenTrie.refused: a node outside the trie");
            goto done;
        }
        uint8_t f = 0;
        for (int32_t r = self->tok_hi[v], end = self->sub_hi[v]; r < end; r++)
            if (!allowed[r]) {
                f = 1;
                break;
            }
        flag[i] = f;
    }
done:
    PyBuffer_Release(&nb);
    PyBuffer_Release(&wb);
    return out;
}

static PyMethodDef TokenTrie_methods[] = {
    {"walk", (PyCFunction)TokenTrie_walk, METH_VARARGS,
     "walk(table, expanded, accepting, nodes, states, crossings): (ended, crossings, pending nodes, pending "
     "states) as int64 bytes."},
    {"refused", (PyCFunction)TokenTrie_refused, METH_VARARGS,
     "refused(nodes, allowed): per node, 1 when a token below it is not allowed."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject ts_TokenTrieType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tokstream._native.TokenTrie",
    .tp_basicsize = sizeof(TokenTrie),
    .tp_dealloc = (destructor)TokenTrie_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The vocabulary's byte trie, walked through a lazy DFA's table (constrain/grammar/walker.py).",
    .tp_methods = TokenTrie_methods,
    .tp_init = (initproc)TokenTrie_init,
    .tp_new = PyType_GenericNew,
};
