/*
 * nvtx.c — NVTX injection: NVTX_INJECTION64_PATH names this library, so the
 * first NVTX call in the target dlopens it and calls InitializeInjectionNvtx2,
 * where we fill the CORE and CORE2 callback tables (cupti.md §3).  Ranges and
 * marks become RANGE records (source NVTX) without any GPU or CUPTI.
 * Compiled to an empty file when the nvtx3 headers were absent at build time.
 * Not signal context.
 */
#include "alloc.h"
#include "capture.h"
#include "env.h"
#include "floor.h"
#include "nvtx.h"
#include "ranges.h"

#ifndef CBN_HAVE_NVTX
void nvtx_thread_end(void)
{
}

void nvtx_after_fork_child(void)
{
}
#else

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#define NVTX_STACK 64
#define NVTX_NAME 128
#define NVTX_OPEN_MAX 1024

/* What a nvtxDomainHandle_t points to (the handle type is opaque to apps). */
struct nvtxDomainRegistration_st {
	char name[NVTX_NAME];
};

/* A registered string handle points to its own copy of the text. */
struct nvtxStringRegistration_st {
	char text[1];
};

struct nvtx_frame {
	const struct nvtxDomainRegistration_st *domain; /* NULL: default domain */
	uint64_t start;
	char name[NVTX_NAME];
};

/* Push/pop ranges of one thread, all domains on one stack (a pop closes the
 * innermost open range of its domain). */
struct nvtx_stack {
	int n;
	uint64_t overflow;
	struct nvtx_frame f[NVTX_STACK];
};

/* Start/end ranges may end on another thread: a shared table. */
struct nvtx_open {
	nvtxRangeId_t id;
	const struct nvtxDomainRegistration_st *domain;
	uint64_t start;
	uint32_t tid;
	char name[NVTX_NAME];
};

static __thread struct nvtx_stack *nvtx_tls AGENT_TLS;
static pthread_mutex_t nvtx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nvtx_open nvtx_open_tab[NVTX_OPEN_MAX];
static _Atomic uint64_t nvtx_next_id = 1;

void nvtx_thread_end(void)
{
	agent_free(nvtx_tls);
	nvtx_tls = NULL;
}

/* Another thread may have held the lock at fork. */
void nvtx_after_fork_child(void)
{
	pthread_mutex_init(&nvtx_lock, NULL);
}

static uint32_t nvtx_tid(void)
{
	return agent_tls.tid ? agent_tls.tid : agent_gettid();
}

static void nvtx_copy_w(char *dst, const wchar_t *src)
{
	size_t i;

	for (i = 0; src && src[i] && i < NVTX_NAME - 1; i++)
		dst[i] = src[i] > 0 && src[i] < 128 ? (char)src[i] : '?';
	dst[i] = 0;
}

static void nvtx_copy(char *dst, const char *src)
{
	strncpy(dst, src ? src : "", NVTX_NAME - 1);
	dst[NVTX_NAME - 1] = 0;
}

static void nvtx_attr_name(char *dst, const nvtxEventAttributes_t *a)
{
	dst[0] = 0;
	if (!a)
		return;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		nvtx_copy(dst, a->message.ascii);
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		nvtx_copy_w(dst, a->message.unicode);
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED:
		if (a->message.registered)
			nvtx_copy(dst, a->message.registered->text);
		break;
	default:
		break;
	}
}

static const char *nvtx_domain_name(const struct nvtxDomainRegistration_st *d)
{
	return d ? d->name : "";
}

static int nvtx_on(void)
{
	return atomic_load_explicit(&agent.active, memory_order_relaxed);
}

/*
 * Capture control (capture.c) at a range's open: --capture-range nvtx:NAME
 * opens a window, a name matching --step counts a step (at the open, so that
 * a schedule can follow NVTX steps).  The range is recorded at its close
 * when a window is open then; a --capture-range range's own close comes
 * after its record.
 */
static void nvtx_opened(const struct nvtxDomainRegistration_st *d, const char *name)
{
	if (capture_is_step_name(name))
		capture_step();
	capture_nvtx_range(nvtx_domain_name(d), name, 1);
}

/* --- push/pop ------------------------------------------------------------- */

static int nvtx_push(const struct nvtxDomainRegistration_st *d, const char *name)
{
	struct nvtx_stack *s = nvtx_tls;
	int i, depth = 0;

	if (!nvtx_on())
		return -1;
	if (!s && !(s = nvtx_tls = agent_calloc(1, sizeof(*s))))
		return -1;
	for (i = 0; i < s->n; i++)
		depth += s->f[i].domain == d;
	if (s->n == NVTX_STACK) {
		s->overflow++;
		return depth;
	}
	s->f[s->n].domain = d;
	s->f[s->n].start = agent_now();
	nvtx_copy(s->f[s->n].name, name);
	s->n++;
	nvtx_opened(d, s->f[s->n - 1].name);
	return depth;
}

static int nvtx_pop(const struct nvtxDomainRegistration_st *d)
{
	struct nvtx_stack *s = nvtx_tls;
	struct nvtx_frame f;
	int i, j, depth = 0;

	if (!s || !nvtx_on())
		return -1;
	if (s->overflow) {
		s->overflow--;
		return 0;
	}
	for (i = s->n - 1; i >= 0 && s->f[i].domain != d; i--)
		;
	if (i < 0)
		return -1;
	f = s->f[i];
	for (j = 0; j < i; j++)
		depth += s->f[j].domain == d;
	memmove(&s->f[i], &s->f[i + 1], (size_t)(s->n - i - 1) * sizeof(s->f[0]));
	s->n--;
	if (capture_is_on())
		ranges_write(CBN_RANGE_PUSHPOP, CBN_SRC_NVTX, f.start, agent_now(), nvtx_tid(),
			     (uint32_t)depth, nvtx_domain_name(d), f.name);
	capture_nvtx_range(nvtx_domain_name(d), f.name, 0);
	return depth;
}

/* --- start/end ------------------------------------------------------------ */

static nvtxRangeId_t nvtx_start(const struct nvtxDomainRegistration_st *d, const char *name)
{
	nvtxRangeId_t id;
	int i;

	if (!nvtx_on())
		return 0;
	id = atomic_fetch_add(&nvtx_next_id, 1);
	pthread_mutex_lock(&nvtx_lock);
	for (i = 0; i < NVTX_OPEN_MAX; i++) {
		if (!nvtx_open_tab[i].id) {
			nvtx_open_tab[i].id = id;
			nvtx_open_tab[i].domain = d;
			nvtx_open_tab[i].start = agent_now();
			nvtx_open_tab[i].tid = nvtx_tid();
			nvtx_copy(nvtx_open_tab[i].name, name);
			break;
		}
	}
	pthread_mutex_unlock(&nvtx_lock);
	if (i < NVTX_OPEN_MAX)
		nvtx_opened(d, nvtx_open_tab[i].name);
	return id;
}

static void nvtx_end(nvtxRangeId_t id)
{
	struct nvtx_open o;
	int i;

	if (!id || !nvtx_on())
		return;
	o.id = 0;
	pthread_mutex_lock(&nvtx_lock);
	for (i = 0; i < NVTX_OPEN_MAX; i++) {
		if (nvtx_open_tab[i].id == id) {
			o = nvtx_open_tab[i];
			nvtx_open_tab[i].id = 0;
			break;
		}
	}
	pthread_mutex_unlock(&nvtx_lock);
	if (!o.id)
		return;
	if (capture_is_on())
		ranges_write(CBN_RANGE_STARTEND, CBN_SRC_NVTX, o.start, agent_now(), o.tid, 0,
			     nvtx_domain_name(o.domain), o.name);
	capture_nvtx_range(nvtx_domain_name(o.domain), o.name, 0);
}

static void nvtx_mark(const struct nvtxDomainRegistration_st *d, const char *name)
{
	uint64_t now;

	if (!nvtx_on())
		return;
	now = agent_now();
	/* A step mark (--step) is kept when it opens or closes a window. */
	if (capture_is_step_name(name) ? capture_step()
				       : capture_is_on())
		ranges_write(CBN_RANGE_MARK, CBN_SRC_NVTX, now, now, nvtx_tid(), 0,
			     nvtx_domain_name(d), name);
}

/* --- CORE callbacks --------------------------------------------------------- */

static void NVTX_API nvtx_MarkEx(const nvtxEventAttributes_t *a)
{
	char n[NVTX_NAME];

	nvtx_attr_name(n, a);
	nvtx_mark(NULL, n);
}

static void NVTX_API nvtx_MarkA(const char *m)
{
	nvtx_mark(NULL, m);
}

static void NVTX_API nvtx_MarkW(const wchar_t *m)
{
	char n[NVTX_NAME];

	nvtx_copy_w(n, m);
	nvtx_mark(NULL, n);
}

static nvtxRangeId_t NVTX_API nvtx_RangeStartEx(const nvtxEventAttributes_t *a)
{
	char n[NVTX_NAME];

	nvtx_attr_name(n, a);
	return nvtx_start(NULL, n);
}

static nvtxRangeId_t NVTX_API nvtx_RangeStartA(const char *m)
{
	return nvtx_start(NULL, m);
}

static nvtxRangeId_t NVTX_API nvtx_RangeStartW(const wchar_t *m)
{
	char n[NVTX_NAME];

	nvtx_copy_w(n, m);
	return nvtx_start(NULL, n);
}

static void NVTX_API nvtx_RangeEnd(nvtxRangeId_t id)
{
	nvtx_end(id);
}

static int NVTX_API nvtx_RangePushEx(const nvtxEventAttributes_t *a)
{
	char n[NVTX_NAME];

	nvtx_attr_name(n, a);
	return nvtx_push(NULL, n);
}

static int NVTX_API nvtx_RangePushA(const char *m)
{
	return nvtx_push(NULL, m);
}

static int NVTX_API nvtx_RangePushW(const wchar_t *m)
{
	char n[NVTX_NAME];

	nvtx_copy_w(n, m);
	return nvtx_push(NULL, n);
}

static int NVTX_API nvtx_RangePop(void)
{
	return nvtx_pop(NULL);
}

static void NVTX_API nvtx_NameOsThreadA(uint32_t tid, const char *name)
{
	struct cbn_rec_thread r;

	if (!nvtx_on())
		return;
	memset(&r, 0, sizeof(r));
	r.h.type = CBN_REC_THREAD_NAME;
	r.h.size = sizeof(r);
	r.ts = agent_now();
	r.tid = tid;
	strncpy(r.name, name ? name : "", CBN_NAME_MAX - 1);
	agent_event(&r, sizeof(r));
}

/* --- CORE2 (domains) -------------------------------------------------------- */

static void NVTX_API nvtx_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	char n[NVTX_NAME];

	nvtx_attr_name(n, a);
	nvtx_mark(d, n);
}

static nvtxRangeId_t NVTX_API nvtx_DomainRangeStartEx(nvtxDomainHandle_t d,
						      const nvtxEventAttributes_t *a)
{
	char n[NVTX_NAME];

	nvtx_attr_name(n, a);
	return nvtx_start(d, n);
}

static void NVTX_API nvtx_DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	(void)d;
	nvtx_end(id);
}

static int NVTX_API nvtx_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	char n[NVTX_NAME];

	nvtx_attr_name(n, a);
	return nvtx_push(d, n);
}

static int NVTX_API nvtx_DomainRangePop(nvtxDomainHandle_t d)
{
	return nvtx_pop(d);
}

static nvtxDomainHandle_t NVTX_API nvtx_DomainCreateA(const char *name)
{
	struct nvtxDomainRegistration_st *d = agent_calloc(1, sizeof(*d));

	if (d)
		nvtx_copy(d->name, name);
	return d;
}

static nvtxDomainHandle_t NVTX_API nvtx_DomainCreateW(const wchar_t *name)
{
	struct nvtxDomainRegistration_st *d = agent_calloc(1, sizeof(*d));

	if (d)
		nvtx_copy_w(d->name, name);
	return d;
}

/* Domains are never freed: a range still open (or a handle kept by the app)
 * may point at one; a domain is a few bytes. */
static void NVTX_API nvtx_DomainDestroy(nvtxDomainHandle_t d)
{
	(void)d;
}

static nvtxStringHandle_t NVTX_API nvtx_DomainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	struct nvtxStringRegistration_st *r = agent_alloc(sizeof(*r) + n);

	(void)d;
	if (r) {
		memcpy(r->text, s ? s : "", n);
		r->text[n] = 0;
	}
	return r;
}

static nvtxStringHandle_t NVTX_API nvtx_DomainRegisterStringW(nvtxDomainHandle_t d,
							       const wchar_t *s)
{
	struct nvtxStringRegistration_st *r = agent_alloc(sizeof(*r) + NVTX_NAME);

	(void)d;
	if (r)
		nvtx_copy_w(r->text, s);
	return r;
}

#define NVTX_SET(tab, n, id, fn)                                     \
	do {                                                         \
		if ((unsigned)(id) < (n) && (tab)[id])               \
			*(tab)[id] = (NvtxFunctionPointer)(void *)(fn); \
	} while (0)

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb;
	NvtxFunctionTable t;
	unsigned int n;
	const char *s = agent_getenv(CBN_ENV_SESSION);

	/* Install whenever we run under cbottleneck, even before our constructor
	 * ran (NVTX may be first used from another constructor): the handlers
	 * check agent.active on every call. */
	if (!s || !*s || !get || agent.not_preloaded)
		return 0;
	cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable)
		return 0;
	if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) && t) {
		NVTX_SET(t, n, NVTX_CBID_CORE_MarkEx, nvtx_MarkEx);
		NVTX_SET(t, n, NVTX_CBID_CORE_MarkA, nvtx_MarkA);
		NVTX_SET(t, n, NVTX_CBID_CORE_MarkW, nvtx_MarkW);
		NVTX_SET(t, n, NVTX_CBID_CORE_RangeStartEx, nvtx_RangeStartEx);
		NVTX_SET(t, n, NVTX_CBID_CORE_RangeStartA, nvtx_RangeStartA);
		NVTX_SET(t, n, NVTX_CBID_CORE_RangeStartW, nvtx_RangeStartW);
		NVTX_SET(t, n, NVTX_CBID_CORE_RangeEnd, nvtx_RangeEnd);
		NVTX_SET(t, n, NVTX_CBID_CORE_RangePushEx, nvtx_RangePushEx);
		NVTX_SET(t, n, NVTX_CBID_CORE_RangePushA, nvtx_RangePushA);
		NVTX_SET(t, n, NVTX_CBID_CORE_RangePushW, nvtx_RangePushW);
		NVTX_SET(t, n, NVTX_CBID_CORE_RangePop, nvtx_RangePop);
		NVTX_SET(t, n, NVTX_CBID_CORE_NameOsThreadA, nvtx_NameOsThreadA);
	} else {
		return 0;
	}
	if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) && t) {
		NVTX_SET(t, n, NVTX_CBID_CORE2_DomainMarkEx, nvtx_DomainMarkEx);
		NVTX_SET(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, nvtx_DomainRangeStartEx);
		NVTX_SET(t, n, NVTX_CBID_CORE2_DomainRangeEnd, nvtx_DomainRangeEnd);
		NVTX_SET(t, n, NVTX_CBID_CORE2_DomainRangePushEx, nvtx_DomainRangePushEx);
		NVTX_SET(t, n, NVTX_CBID_CORE2_DomainRangePop, nvtx_DomainRangePop);
		NVTX_SET(t, n, NVTX_CBID_CORE2_DomainCreateA, nvtx_DomainCreateA);
		NVTX_SET(t, n, NVTX_CBID_CORE2_DomainCreateW, nvtx_DomainCreateW);
		NVTX_SET(t, n, NVTX_CBID_CORE2_DomainDestroy, nvtx_DomainDestroy);
		NVTX_SET(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, nvtx_DomainRegisterStringA);
		NVTX_SET(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, nvtx_DomainRegisterStringW);
	}
	return 1;
}

#endif /* CBN_HAVE_NVTX */
