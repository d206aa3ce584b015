// fakenccl.c: a stand-in for libnccl.so.2 over host memory, for gotrain's
// tests without a GPU (package gpu, issue 13). ncclCommInitAll makes one
// clique of ranks in this process. An all-reduce completes once every rank
// has posted its part: inside ncclGroupStart/End, the parts are posted at
// ncclGroupEnd; outside a group, the call waits for the other ranks
// (issued from other threads). The sum runs in rank order, into a
// temporary, then is copied to every rank's receive buffer.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef int ncclResult_t;
enum { ncclSuccess = 0, ncclInternalError = 3, ncclInvalidArgument = 4, ncclInvalidUsage = 5 };
enum { ncclInt32 = 2, ncclFloat32 = 7, ncclFloat64 = 8 };
enum { ncclSum = 0 };

#define MAX_RANKS 64

struct slot {
	long seq;  // the collective's sequence number in the clique
	int posted;
	int done;
	const void *send[MAX_RANKS];
	void *recv[MAX_RANKS];
	size_t count;
	int type;
};

struct clique {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int n;
	int refs;
	struct slot slots[8];  // ring of collectives in flight
};

struct comm { struct clique *q; int rank; int dev; long seq; };

const char *ncclGetErrorString(ncclResult_t r) {
	switch (r) {
	case ncclSuccess: return "no error";
	case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
	case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
	case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
	}
	return "unknown result code";
}

ncclResult_t ncclCommInitAll(struct comm **comms, int n, const int *devs) {
	if (n <= 0 || n > MAX_RANKS || !comms) return ncclInvalidArgument;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (devs && devs[i] == devs[j]) return ncclInvalidUsage;  // "Duplicate GPU detected"
	struct clique *q = calloc(1, sizeof *q);
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cond, NULL);
	q->n = n;
	q->refs = n;
	for (int i = 0; i < 8; i++) q->slots[i].seq = -1;
	for (int i = 0; i < n; i++) {
		comms[i] = calloc(1, sizeof **comms);
		comms[i]->q = q;
		comms[i]->rank = i;
		comms[i]->dev = devs ? devs[i] : i;
	}
	return ncclSuccess;
}

ncclResult_t ncclCommDestroy(struct comm *c) {
	if (!c) return ncclInvalidArgument;
	struct clique *q = c->q;
	pthread_mutex_lock(&q->mu);
	int last = --q->refs == 0;
	pthread_mutex_unlock(&q->mu);
	if (last) {
		pthread_mutex_destroy(&q->mu);
		pthread_cond_destroy(&q->cond);
		free(q);
	}
	free(c);
	return ncclSuccess;
}

static size_t typeSize(int t) {
	switch (t) {
	case ncclInt32: case ncclFloat32: return 4;
	case ncclFloat64: return 8;
	}
	return 0;
}

#define SUM(T)                                                                   \
	{                                                                            \
		T *acc = tmp;                                                            \
		memcpy(acc, s->send[0], s->count * sizeof(T));                           \
		for (int r = 1; r < q->n; r++) {                                         \
			const T *x = s->send[r];                                             \
			for (size_t i = 0; i < s->count; i++) acc[i] += x[i];                \
		}                                                                        \
	}

// reduceLocked runs the collective in s; q->mu is held.
static void reduceLocked(struct clique *q, struct slot *s) {
	size_t bytes = s->count * typeSize(s->type);
	void *tmp = malloc(bytes ? bytes : 1);
	switch (s->type) {
	case ncclInt32: SUM(int) break;
	case ncclFloat32: SUM(float) break;
	case ncclFloat64: SUM(double) break;
	}
	for (int r = 0; r < q->n; r++) memcpy(s->recv[r], tmp, bytes);
	free(tmp);
	s->done = 1;
	pthread_cond_broadcast(&q->cond);
}

// pending holds this thread's calls inside a group.
struct call { struct comm *c; const void *send; void *recv; size_t count; int type; long seq; };
static __thread int groupDepth;
static __thread struct call pending[4 * MAX_RANKS];
static __thread int npending;

static ncclResult_t post(struct call *k) {
	struct clique *q = k->c->q;
	pthread_mutex_lock(&q->mu);
	struct slot *s = &q->slots[k->seq % 8];
	while (s->seq != k->seq && s->seq != -1 && !(s->done && s->posted == q->n))
		pthread_cond_wait(&q->cond, &q->mu);  // the ring slot is still in use
	if (s->seq != k->seq) {
		memset(s, 0, sizeof *s);
		s->seq = k->seq;
		s->count = k->count;
		s->type = k->type;
	}
	if (s->count != k->count || s->type != k->type) {
		pthread_mutex_unlock(&q->mu);
		return ncclInvalidUsage;
	}
	s->send[k->c->rank] = k->send;
	s->recv[k->c->rank] = k->recv;
	if (++s->posted == q->n) reduceLocked(q, s);
	pthread_mutex_unlock(&q->mu);
	return ncclSuccess;
}

static void wait(struct call *k) {
	struct clique *q = k->c->q;
	pthread_mutex_lock(&q->mu);
	struct slot *s = &q->slots[k->seq % 8];
	while (!(s->seq == k->seq && s->done) && s->seq <= k->seq) pthread_cond_wait(&q->cond, &q->mu);
	pthread_mutex_unlock(&q->mu);
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, int type, int op, struct comm *c, void *stream) {
	if (!c || typeSize(type) == 0 || op != ncclSum) return ncclInvalidArgument;
	struct call k = {c, send, recv, count, type, c->seq++};
	if (groupDepth > 0) {
		if (npending == sizeof pending / sizeof pending[0]) return ncclInvalidUsage;
		pending[npending++] = k;
		return ncclSuccess;
	}
	ncclResult_t r = post(&k);
	if (r == ncclSuccess) wait(&k);
	return r;
}

ncclResult_t ncclGroupStart(void) { groupDepth++; return ncclSuccess; }

ncclResult_t ncclGroupEnd(void) {
	if (groupDepth == 0) return ncclInvalidUsage;
	if (--groupDepth > 0) return ncclSuccess;
	ncclResult_t r = ncclSuccess;
	int n = npending;
	npending = 0;
	for (int i = 0; i < n && r == ncclSuccess; i++) r = post(&pending[i]);
	for (int i = 0; i < n && r == ncclSuccess; i++) wait(&pending[i]);
	return r;
}
