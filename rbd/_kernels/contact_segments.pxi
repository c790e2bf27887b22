# Included by contact.pyx (one module): a batch of contact runs on several threads, cut
# into segments that either thread continues (the module notes of contact.pyx).  Uses its
# Run, start_run and _advance.

cdef struct Segments:
    # the segments of N runs handed out in turn (_run_segments)
    Py_ssize_t steps              # steps a segment takes (the last one of a run: fewer)
    Py_ssize_t per_run            # segments of a run
    Py_ssize_t taken              # tickets handed out: ticket i is segment i // N of run i % N
    openmp.omp_lock_t ticket_lock
    Py_ssize_t* done              # per run: its segments taken so far (per_run once it ended)
    openmp.omp_lock_t* locks      # per run: guards done[s] and the run while a segment runs


#: Segments a run is cut into on several threads (_run_segments): at the end of a batch a
#: thread waits for at most one segment of another, 1/SEGMENTS of a run.
cdef enum:
    SEGMENTS = 16


cdef inline Py_ssize_t segment_steps(Py_ssize_t steps) noexcept nogil:
    # steps per segment of a run of steps + 1 evaluations (steps 0, …, steps)
    return (steps + SEGMENTS) // SEGMENTS


cdef inline int _run_segments(Run* run, Py_ssize_t N, int nt) except -1:
    # the N runs on nt threads, segment by segment (module notes): a thread takes the next
    # ticket (segment g of run s), waits until segment g − 1 of run s is done (another
    # thread may still be on it), and advances the run by one segment
    cdef Segments seg
    cdef Py_ssize_t s, ticket, g, total
    seg.steps = segment_steps(run.steps)
    seg.per_run = (run.steps + seg.steps) // seg.steps
    seg.taken = 0
    total = N * seg.per_run
    seg.done = <Py_ssize_t*>malloc(N * sizeof(Py_ssize_t))
    seg.locks = <openmp.omp_lock_t*>malloc(N * sizeof(openmp.omp_lock_t))
    if seg.done == NULL or seg.locks == NULL:
        free(seg.done)
        free(seg.locks)
        raise MemoryError()
    openmp.omp_init_lock(&seg.ticket_lock)
    for s in range(N):
        seg.done[s] = 0
        openmp.omp_init_lock(&seg.locks[s])
    with nogil, parallel(num_threads=nt):
        while True:
            openmp.omp_set_lock(&seg.ticket_lock)
            ticket = seg.taken
            seg.taken = seg.taken + 1
            openmp.omp_unset_lock(&seg.ticket_lock)
            if ticket >= total:
                break
            s = ticket % N
            g = ticket // N
            _segment(run, &seg, s, g, threadid())
    for s in range(N):
        openmp.omp_destroy_lock(&seg.locks[s])
    openmp.omp_destroy_lock(&seg.ticket_lock)
    free(seg.done)
    free(seg.locks)
    return 0


cdef inline void _segment(Run* run, Segments* seg, Py_ssize_t s, Py_ssize_t g,
                          int t) noexcept nogil:
    # segment g of run s in thread t: once segment g − 1 is done (the lock held meanwhile);
    # nothing when the run has ended
    while True:
        openmp.omp_set_lock(&seg.locks[s])
        if seg.done[s] >= g:
            break
        openmp.omp_unset_lock(&seg.locks[s])          # segment g − 1 is still running
    if seg.done[s] == g:
        if g == 0:
            start_run(run, s)
        if _advance(run, s, t, min((g + 1) * seg.steps, run.steps + 1)):
            seg.done[s] = seg.per_run
        else:
            seg.done[s] = g + 1
    openmp.omp_unset_lock(&seg.locks[s])
