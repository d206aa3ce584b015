// The C side of the oneDNN binding: one convolution primitive (forward,
// backward-data or backward-weights) on NHWC activations with its weights in
// the format oneDNN picks, the reorder between that format and the caller's
// HWIO weights, and a user scratchpad. Go calls gt_conv_create once per
// shape and gt_conv_exec per step; see dnnl.go.

#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

enum { GT_FWD = 0, GT_BWD_DATA = 1, GT_BWD_WEIGHTS = 2 };

typedef struct {
	long long n, h, w, c;      // input batch, height, width, channels
	long long k;               // output channels
	long long kh, kw;          // kernel
	long long oh, ow;          // output height and width
	long long sh, sw;          // strides
	long long dh, dw;          // dilations, 1 for none
	long long pt, pl, pb, pr;  // padding: top, left, bottom, right
} gt_geom;

typedef struct {
	int kind;
	dnnl_engine_t eng;
	dnnl_stream_t strm;
	dnnl_primitive_t prim;
	dnnl_primitive_t wreorder; // HWIO <-> the primitive's weights format; NULL if they are the same
	dnnl_memory_t act_a;       // fwd: src, bwd data: diff_dst, bwd weights: src
	dnnl_memory_t act_b;       // fwd: dst, bwd data: diff_src, bwd weights: diff_dst
	dnnl_memory_t wts;         // the primitive's weights (or diff weights)
	dnnl_memory_t wuser;       // the caller's HWIO weights
	dnnl_memory_t bias;        // fwd with bias only
	dnnl_memory_t scratch;     // NULL if the primitives need none
	void *wbuf;                // wts' storage when a reorder is needed
	void *sbuf;                // scratch's storage
	char impl[128];
} gt_conv;

static void gt_conv_free(gt_conv *c) {
	if (!c) return;
	if (c->prim) dnnl_primitive_destroy(c->prim);
	if (c->wreorder) dnnl_primitive_destroy(c->wreorder);
	if (c->act_a) dnnl_memory_destroy(c->act_a);
	if (c->act_b) dnnl_memory_destroy(c->act_b);
	if (c->wts) dnnl_memory_destroy(c->wts);
	if (c->wuser) dnnl_memory_destroy(c->wuser);
	if (c->bias) dnnl_memory_destroy(c->bias);
	if (c->scratch) dnnl_memory_destroy(c->scratch);
	if (c->strm) dnnl_stream_destroy(c->strm);
	if (c->eng) dnnl_engine_destroy(c->eng);
	free(c->wbuf);
	free(c->sbuf);
	free(c);
}

#define GT_CHECK(call) do { dnnl_status_t st_ = (call); if (st_ != dnnl_success) { \
	snprintf(err, errlen, "%s: status %d", #call, (int)st_); goto fail; } } while (0)

static void *gt_alloc(size_t n) {
	void *p = NULL;
	if (n == 0) return NULL;
	if (posix_memalign(&p, 64, (n + 63) / 64 * 64) != 0) return NULL;
	return p;
}

// gt_conv_create builds the primitive of kind for g, with bias (forward
// only) and a fused ReLU (forward only), and writes the oneDNN error into
// err on failure.
static gt_conv *gt_conv_create(int kind, gt_geom g, int with_bias, int relu, int nthreads, char *err, size_t errlen) {
	gt_conv *c = calloc(1, sizeof *c);
	// A jit primitive takes its thread count when it is created, and runs
	// that many threads whatever the caller's count then: created with the
	// default (every core), each of two replicas ran two threads.
	omp_set_num_threads(nthreads);
	dnnl_primitive_attr_t attr = NULL;
	dnnl_post_ops_t po = NULL;
	dnnl_primitive_desc_t fwd_pd = NULL, pd = NULL, rpd = NULL;
	dnnl_convolution_desc_t fd, bd;
	dnnl_memory_desc_t src, dst, wany, whwio, bmd;
	if (!c) { snprintf(err, errlen, "out of memory"); return NULL; }
	c->kind = kind;
	dnnl_dims_t sdims = {g.n, g.c, g.h, g.w}, ddims = {g.n, g.k, g.oh, g.ow};
	dnnl_dims_t wdims = {g.k, g.c, g.kh, g.kw}, bdims = {g.k};
	dnnl_dims_t strides = {g.sh, g.sw}, dil = {g.dh - 1, g.dw - 1};
	dnnl_dims_t padl = {g.pt, g.pl}, padr = {g.pb, g.pr};
	GT_CHECK(dnnl_engine_create(&c->eng, dnnl_cpu, 0));
	GT_CHECK(dnnl_stream_create(&c->strm, c->eng, dnnl_stream_default_flags));
	GT_CHECK(dnnl_memory_desc_init_by_tag(&src, 4, sdims, dnnl_f32, dnnl_nhwc));
	GT_CHECK(dnnl_memory_desc_init_by_tag(&dst, 4, ddims, dnnl_f32, dnnl_nhwc));
	GT_CHECK(dnnl_memory_desc_init_by_tag(&wany, 4, wdims, dnnl_f32, dnnl_format_tag_any));
	GT_CHECK(dnnl_memory_desc_init_by_tag(&whwio, 4, wdims, dnnl_f32, dnnl_hwio));
	GT_CHECK(dnnl_memory_desc_init_by_tag(&bmd, 1, bdims, dnnl_f32, dnnl_a));

	GT_CHECK(dnnl_primitive_attr_create(&attr));
	GT_CHECK(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user));
	if (kind == GT_FWD && relu) {
		GT_CHECK(dnnl_post_ops_create(&po));
		GT_CHECK(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
		GT_CHECK(dnnl_primitive_attr_set_post_ops(attr, po));
	}
	// The forward descriptor: the primitive itself for GT_FWD, the hint the
	// backward ones need otherwise.
	GT_CHECK(dnnl_dilated_convolution_forward_desc_init(&fd, dnnl_forward_training, dnnl_convolution_direct,
		&src, &wany, (kind == GT_FWD && with_bias) ? &bmd : NULL, &dst, strides, dil, padl, padr));
	GT_CHECK(dnnl_primitive_desc_create(&fwd_pd, &fd, kind == GT_FWD ? attr : NULL, c->eng, NULL));
	if (kind == GT_FWD) {
		pd = fwd_pd;
		fwd_pd = NULL;
	} else if (kind == GT_BWD_DATA) {
		GT_CHECK(dnnl_dilated_convolution_backward_data_desc_init(&bd, dnnl_convolution_direct,
			&src, &wany, &dst, strides, dil, padl, padr));
		GT_CHECK(dnnl_primitive_desc_create(&pd, &bd, attr, c->eng, fwd_pd));
	} else {
		GT_CHECK(dnnl_dilated_convolution_backward_weights_desc_init(&bd, dnnl_convolution_direct,
			&src, &wany, NULL, &dst, strides, dil, padl, padr));
		GT_CHECK(dnnl_primitive_desc_create(&pd, &bd, attr, c->eng, fwd_pd));
	}
	const char *impl = NULL;
	GT_CHECK(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
	snprintf(c->impl, sizeof c->impl, "%s", impl ? impl : "");
	GT_CHECK(dnnl_primitive_create(&c->prim, pd));

	const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd,
		kind == GT_BWD_WEIGHTS ? dnnl_query_diff_weights_md : dnnl_query_weights_md, 0);
	const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
	size_t scratch = smd ? dnnl_memory_desc_get_size(smd) : 0;
	GT_CHECK(dnnl_memory_create(&c->act_a, kind == GT_BWD_DATA ? &dst : &src, c->eng, DNNL_MEMORY_NONE));
	GT_CHECK(dnnl_memory_create(&c->act_b, kind == GT_BWD_DATA ? &src : &dst, c->eng, DNNL_MEMORY_NONE));
	GT_CHECK(dnnl_memory_create(&c->wuser, &whwio, c->eng, DNNL_MEMORY_NONE));
	if (kind == GT_FWD && with_bias)
		GT_CHECK(dnnl_memory_create(&c->bias, &bmd, c->eng, DNNL_MEMORY_NONE));
	if (!dnnl_memory_desc_equal(wmd, &whwio)) {
		c->wbuf = gt_alloc(dnnl_memory_desc_get_size(wmd));
		if (!c->wbuf) { snprintf(err, errlen, "out of memory for the weights"); goto fail; }
		GT_CHECK(dnnl_memory_create(&c->wts, wmd, c->eng, c->wbuf));
		dnnl_primitive_attr_t rattr = NULL;
		GT_CHECK(dnnl_primitive_attr_create(&rattr));
		dnnl_primitive_attr_set_scratchpad_mode(rattr, dnnl_scratchpad_mode_user);
		dnnl_status_t st = kind == GT_BWD_WEIGHTS
			? dnnl_reorder_primitive_desc_create(&rpd, wmd, c->eng, &whwio, c->eng, rattr)
			: dnnl_reorder_primitive_desc_create(&rpd, &whwio, c->eng, wmd, c->eng, rattr);
		dnnl_primitive_attr_destroy(rattr);
		GT_CHECK(st);
		const dnnl_memory_desc_t *rsmd = dnnl_primitive_desc_query_md(rpd, dnnl_query_scratchpad_md, 0);
		size_t rs = rsmd ? dnnl_memory_desc_get_size(rsmd) : 0;
		if (rs > scratch) scratch = rs;
		GT_CHECK(dnnl_primitive_create(&c->wreorder, rpd));
	}
	if (scratch > 0) {
		// One buffer serves the convolution and the reorder, which run one
		// after the other. Its descriptor is a plain byte array.
		dnnl_memory_desc_t bytes;
		dnnl_dims_t sz = {(dnnl_dim_t)scratch};
		GT_CHECK(dnnl_memory_desc_init_by_tag(&bytes, 1, sz, dnnl_u8, dnnl_a));
		c->sbuf = gt_alloc(scratch);
		if (!c->sbuf) { snprintf(err, errlen, "out of memory for the scratchpad"); goto fail; }
		GT_CHECK(dnnl_memory_create(&c->scratch, &bytes, c->eng, c->sbuf));
	}
	dnnl_primitive_desc_destroy(pd);
	if (rpd) dnnl_primitive_desc_destroy(rpd);
	dnnl_primitive_attr_destroy(attr);
	if (po) dnnl_post_ops_destroy(po);
	return c;
fail:
	if (fwd_pd) dnnl_primitive_desc_destroy(fwd_pd);
	if (pd) dnnl_primitive_desc_destroy(pd);
	if (rpd) dnnl_primitive_desc_destroy(rpd);
	if (attr) dnnl_primitive_attr_destroy(attr);
	if (po) dnnl_post_ops_destroy(po);
	gt_conv_free(c);
	return NULL;
}

// gt_conv_exec runs c on the caller's buffers with nthreads OpenMP threads:
// a and b are the activations in act_a's and act_b's roles, w the HWIO
// weights (or weight gradient), bias the forward bias or NULL. omp's thread
// count is per OS thread, and Go may run each call on another, so it is set
// at every call. reorders 0 runs the primitive alone on the weights already
// in its own format, as oneDNN's own figure for the shape (Conv.Time).
static int gt_conv_exec(gt_conv *c, void *a, void *b, void *w, void *bias, int nthreads, int reorders) {
	dnnl_status_t st;
	dnnl_exec_arg_t args[5];
	int n = 0;
	omp_set_num_threads(nthreads);
	dnnl_memory_set_data_handle(c->act_a, a);
	dnnl_memory_set_data_handle(c->act_b, b);
	dnnl_memory_set_data_handle(c->wuser, w);
	dnnl_memory_t wts = c->wts ? c->wts : c->wuser;
	if (c->scratch) {
		args[n].arg = DNNL_ARG_SCRATCHPAD;
		args[n++].memory = c->scratch;
	}
	if (reorders && c->wreorder && c->kind != GT_BWD_WEIGHTS) {
		dnnl_exec_arg_t r[3] = {{DNNL_ARG_FROM, c->wuser}, {DNNL_ARG_TO, c->wts}, {DNNL_ARG_SCRATCHPAD, c->scratch}};
		if ((st = dnnl_primitive_execute(c->wreorder, c->strm, c->scratch ? 3 : 2, r)) != dnnl_success) return st;
	}
	switch (c->kind) {
	case GT_FWD:
		args[n].arg = DNNL_ARG_SRC; args[n++].memory = c->act_a;
		args[n].arg = DNNL_ARG_WEIGHTS; args[n++].memory = wts;
		args[n].arg = DNNL_ARG_DST; args[n++].memory = c->act_b;
		if (c->bias) {
			dnnl_memory_set_data_handle(c->bias, bias);
			args[n].arg = DNNL_ARG_BIAS; args[n++].memory = c->bias;
		}
		break;
	case GT_BWD_DATA:
		args[n].arg = DNNL_ARG_DIFF_DST; args[n++].memory = c->act_a;
		args[n].arg = DNNL_ARG_WEIGHTS; args[n++].memory = wts;
		args[n].arg = DNNL_ARG_DIFF_SRC; args[n++].memory = c->act_b;
		break;
	default:
		args[n].arg = DNNL_ARG_SRC; args[n++].memory = c->act_a;
		args[n].arg = DNNL_ARG_DIFF_DST; args[n++].memory = c->act_b;
		args[n].arg = DNNL_ARG_DIFF_WEIGHTS; args[n++].memory = wts;
	}
	if ((st = dnnl_primitive_execute(c->prim, c->strm, n, args)) != dnnl_success) return st;
	if (reorders && c->wreorder && c->kind == GT_BWD_WEIGHTS) {
		dnnl_exec_arg_t r[3] = {{DNNL_ARG_FROM, c->wts}, {DNNL_ARG_TO, c->wuser}, {DNNL_ARG_SCRATCHPAD, c->scratch}};
		if ((st = dnnl_primitive_execute(c->wreorder, c->strm, c->scratch ? 3 : 2, r)) != dnnl_success) return st;
	}
	return dnnl_stream_wait(c->strm);
}
