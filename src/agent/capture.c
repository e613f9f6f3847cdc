/*
 * capture.c — what the agent records when: the capture windows (docs/steps.md).
 *
 * Without controls the one window is the whole run and nothing here costs
 * anything.  With them, recording is on only while every gate that was asked
 * for is open (the bits of header.capture_gates, cbn_gates.h, shared with the
 * launcher, which turns the gates that need a clock or a listener outside
 * the program: src/monitor/mon_capture.c):
 *
 *   time      --delay (opens at start + delay) and --duration (closes at
 *             first open + duration): the launcher
 *   schedule  --schedule, decided at each cbn_step() (cbn_schedule.h)
 *   range     --capture-range api (cbn_start/cbn_stop, cudaProfilerStart/
 *             Stop) or nvtx:NAME (while such a range is open)
 *   manual    `cbottleneck ctl PID start|stop` and the toggle signal (the
 *             launcher: the toggle handler here only counts); and
 *             cbn_start/cbn_stop when the range gate is not theirs
 *
 * The change that opens or closes the window writes a CAPTURE record naming
 * its cause and updates header.capture; here it also tells the listener (the
 * CUDA layer, which polls for the launcher's changes).  The samplers read the
 * gates at every signal and park themselves (sampler.c).  Normal context
 * only, but for the toggle handler.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "env.h"
#include "floor.h"
#include "sigwrap.h"
#include "agent_api.h"
#include "cbn_gates.h"
#include "cbn_rx.h"
#include "cbn_schedule.h"
#include "cbn_signal.h"

/* An extra gate: closed by the exit, never opened again. */
#define GATE_EXIT 0x10u
/* An extra gate closed while the constructor sets the others up. */
#define GATE_INIT 0x80000000u

static struct {
	int controlled;                  /* any control asked for */
	int notified;                    /* the state the listener was told last */
	int have_sched;
	struct cbn_schedule sched;
	uint64_t fork_gates, fork_first; /* the parent's, for a fork child's new file */
	int range_api;                   /* --capture-range api */
	char nvtx_name[128], nvtx_domain[64];
	int nvtx;                        /* --capture-range nvtx:... */
	int nvtx_depth;                  /* such ranges open now (any thread) */
	int step_regex_ok;
	struct cbn_rx step_regex;        /* no allocation, unlike regcomp (cbn_rx.h) */
	void (*listener)(int);
	char spec[sizeof(((struct cbn_file_header *)0)->capture.spec)];
	pthread_mutex_t lock;
} cap = {.lock = PTHREAD_MUTEX_INITIALIZER};

/*
 * The toggle signal (--toggle-signal): installed at start through the real
 * sigaction unless the signal already has a handler.  It is not one of the
 * signals sigwrap owns, so a program that installs its own handler later
 * simply replaces ours (the program wins; capture_exit notes it in the
 * header's spec).  The handler only counts; the background thread flips the
 * manual gate (capture_tick).
 */
static int toggle_sig;

static void capture_toggle_handler(int sig)
{
	struct cbn_file_header *h = agent.w.hdr;

	(void)sig;
	if (h)
		atomic_fetch_add_explicit(&h->capture_toggles, 1, memory_order_relaxed);
}

/* Returns 1 when the signal is ours now. */
static int capture_toggle_install(int sig)
{
	struct sigaction sa, cur;

	if (sig <= 0 || sig == atomic_load(&agent.signo) ||
	    sigwrap_real_sigaction(sig, NULL, &cur) != 0)
		return 0;
	if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN)
		return 0; /* the program's (a constructor ran before ours) */
	if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = capture_toggle_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return sigwrap_real_sigaction(sig, &sa, NULL) == 0;
}

/* 1 while the toggle signal still reaches our handler. */
static int capture_toggle_held(void)
{
	struct sigaction cur;

	return toggle_sig && sigwrap_real_sigaction(toggle_sig, NULL, &cur) == 0 &&
	       !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == capture_toggle_handler;
}

/* The gates every recorder reads (capture_is_on): the header's once the
 * file is open, an open one before. */
static _Atomic uint64_t capture_none;
_Atomic uint64_t *capture_word = &capture_none;
_Atomic uint64_t capture_steps;

static void capture_record_at(uint64_t ts, int event, int cause, const char *name)
{
	struct {
		struct cbn_rec_capture r;
		char name[128];
	} rec;
	size_t n = name ? strnlen(name, sizeof(rec.name) - 1) : 0;

	memset(&rec, 0, sizeof(rec));
	rec.r.h.type = CBN_REC_CAPTURE;
	rec.r.ts = ts;
	rec.r.step = atomic_load(&capture_steps);
	rec.r.tid = agent_tls.tid ? agent_tls.tid : agent_gettid();
	rec.r.event = (uint16_t)event;
	rec.r.cause = (uint16_t)cause;
	rec.r.name_len = (uint32_t)n;
	if (n)
		memcpy(rec.name, name, n);
	rec.r.h.size = (uint32_t)CBN_REC_ALIGN(sizeof(rec.r) + n + 1);
	agent_event(&rec, rec.r.h.size);
}


/* Open or close gate; the edge it makes, if any, is recorded and told to
 * the listener (in order: one change at a time here). */
static int capture_gate(uint32_t gate, int open, int cause)
{
	struct cbn_file_header *h = agent.w.hdr;
	void (*fn)(int) = NULL;
	uint64_t ts;
	int edge, on;

	if (!cap.controlled || !h || !atomic_load(&agent.active))
		return capture_is_on();
	pthread_mutex_lock(&cap.lock);
	edge = cbn_gates_set(h, gate, open, &ts);
	if (edge)
		capture_record_at(ts, edge > 0 ? CBN_CAPTURE_OPEN : CBN_CAPTURE_CLOSE, cause, NULL);
	on = capture_is_on();
	if (cap.notified != on) {
		cap.notified = on;
		fn = cap.listener;
	}
	pthread_mutex_unlock(&cap.lock);
	if (fn)
		fn(on);
	return on;
}

static void capture_spec_add(char *spec, size_t len, const char *key, const char *v)
{
	size_t n = strlen(spec);

	if (n < len)
		snprintf(spec + n, len - n, "%s%s=%s", n ? " " : "", key, v);
}

/* Constructor, before the first sampler is armed. */
void capture_init(void)
{
	struct cbn_file_header *h = agent.w.hdr;
	const char *sched = agent_getenv(CBN_ENV_SCHEDULE), *range = agent_getenv(CBN_ENV_CAPTURE_RANGE);
	const char *delay = agent_getenv(CBN_ENV_DELAY), *dur = agent_getenv(CBN_ENV_DURATION);
	const char *toggle = agent_getenv(CBN_ENV_TOGGLE_SIGNAL), *step = agent_getenv(CBN_ENV_STEP);
	char spec[sizeof(h->capture.spec)] = "";
	uint32_t closed = 0;
	uint64_t delay_ns = 0, ts;

	if (step && *step && cbn_rx_compile(&cap.step_regex, step, NULL, 0) == 0)
		cap.step_regex_ok = 1;
	if (sched && *sched && cbn_schedule_parse(sched, &cap.sched) == 0) {
		cap.have_sched = 1;
		/* step 0: from the start to the first cbn_step(), as torch's */
		if (!cbn_schedule_active(&cap.sched, 0))
			closed |= CBN_GATE_SCHED;
		capture_spec_add(spec, sizeof(spec), "schedule", sched);
	}
	if (delay && *delay && (delay_ns = strtoull(delay, NULL, 10)) > 0) {
		closed |= CBN_GATE_TIME;
		capture_spec_add(spec, sizeof(spec), "delay_ns", delay);
	}
	if (dur && *dur && strtoull(dur, NULL, 10) > 0)
		capture_spec_add(spec, sizeof(spec), "duration_ns", dur);
	if (range && !strcmp(range, "api")) {
		cap.range_api = 1;
		closed |= CBN_GATE_RANGE;
		capture_spec_add(spec, sizeof(spec), "capture_range", range);
	} else if (range && !strncmp(range, "nvtx:", 5) && range[5]) {
		const char *at = strchr(range + 5, '@');
		size_t n = at ? (size_t)(at - range - 5) : strlen(range + 5);

		if (n >= sizeof(cap.nvtx_name))
			n = sizeof(cap.nvtx_name) - 1;
		memcpy(cap.nvtx_name, range + 5, n);
		if (at)
			snprintf(cap.nvtx_domain, sizeof(cap.nvtx_domain), "%s", at + 1);
		cap.nvtx = 1;
		closed |= CBN_GATE_RANGE;
		capture_spec_add(spec, sizeof(spec), "capture_range", range);
	}
	if (toggle && *toggle && cbn_signal_parse(toggle)) {
		if (capture_toggle_install(cbn_signal_parse(toggle))) {
			toggle_sig = cbn_signal_parse(toggle);
			capture_spec_add(spec, sizeof(spec), "toggle_signal", toggle);
		} else {
			/* The program handles it (or it is our sampling signal). */
			capture_spec_add(spec, sizeof(spec), "toggle_signal_refused", toggle);
		}
	}
	cap.controlled = spec[0] != 0;
	memcpy(cap.spec, spec, sizeof(spec));
	if (!cap.controlled || !h)
		return;
	atomic_store(&h->capture.mode, CBN_CAPTURE_CONTROLLED);
	h->capture.spec_len = (uint32_t)strlen(spec);
	memcpy(h->capture.spec, spec, h->capture.spec_len);
	/* Open at start unless a gate is closed; the START record says so. */
	atomic_store(&h->capture_gates, (uint64_t)(closed | GATE_INIT));
	capture_word = &h->capture_gates;
	if (cbn_gates_set(h, GATE_INIT, 1, &ts) > 0)
		capture_record_at(ts, CBN_CAPTURE_OPEN, CBN_CAUSE_START, NULL);
	cap.notified = capture_is_on();
}

/* Before a fork (the prepare handler): the gates as they are, for the
 * child's new file. */
void capture_before_fork(void)
{
	struct cbn_file_header *h = agent.w.hdr;

	cap.fork_gates = h ? atomic_load(&h->capture_gates) : 0;
	cap.fork_first = h ? atomic_load(&h->capture_first_ns) : 0;
}

/* A fork child inherits the state; its new file gets the header block. */
void capture_after_fork_child(void)
{
	struct cbn_file_header *h = agent.w.hdr;

	pthread_mutex_init(&cap.lock, NULL);
	if (!h) {
		capture_word = &capture_none;
		return;
	}
	atomic_store(&h->capture_gates, cap.controlled ? cap.fork_gates : 0);
	capture_word = &h->capture_gates;
	if (!cap.controlled)
		return;
	h->capture.spec_len = (uint32_t)strnlen(cap.spec, sizeof(cap.spec) - 1);
	memcpy(h->capture.spec, cap.spec, h->capture.spec_len);
	atomic_store(&h->capture.mode, CBN_CAPTURE_CONTROLLED);
	atomic_store(&h->capture_first_ns, cap.fork_first);
	if (capture_is_on()) {
		uint64_t now = agent_now();

		atomic_store(&h->capture.active, 1);
		atomic_store(&h->capture.windows, 1);
		atomic_store(&h->capture_opened_ns, now);
		capture_record_at(now, CBN_CAPTURE_OPEN, CBN_CAUSE_START, NULL);
	}
}

/* At exit (normal context): close the window that is open. */
void capture_exit(void)
{
	struct cbn_file_header *h = agent.w.hdr;

	if (!cap.controlled)
		return;
	if (toggle_sig && !capture_toggle_held() && h) {
		/* The program installed its own handler: it won. */
		const char *note = " toggle_signal_taken_by_program";
		size_t n = h->capture.spec_len, k = strlen(note);

		if (n + k < sizeof(h->capture.spec)) {
			memcpy(h->capture.spec + n, note, k);
			h->capture.spec_len = (uint32_t)(n + k);
		}
	}
	capture_gate(GATE_EXIT, 0, CBN_CAUSE_EXIT);
}

/* cbn_step() (and a step range or mark, --step): count it and let the
 * schedule decide about the step it starts (the n-th call starts step n,
 * cbn_schedule.h).  Returns 1 when the marker is to be recorded (recording
 * before or after it: the marker that ends the last active step is kept). */
int capture_step(void)
{
	uint64_t n = atomic_fetch_add(&capture_steps, 1) + 1;
	int was = capture_is_on(), now = was;

	if (agent.w.hdr)
		atomic_store(&agent.w.hdr->capture.steps, n);
	if (cap.have_sched)
		now = capture_gate(CBN_GATE_SCHED, cbn_schedule_active(&cap.sched, n),
				   CBN_CAUSE_SCHEDULE);
	return was || now;
}

/* A range or mark name: 1 when --step makes it a step. */
int capture_is_step_name(const char *name)
{
	return cap.step_regex_ok && name && cbn_rx_search(&cap.step_regex, name);
}

/* An NVTX range opened (open = 1) or closed: --capture-range nvtx:NAME. */
void capture_nvtx_range(const char *domain, const char *name, int open)
{
	int depth;

	if (!cap.nvtx || !name || strcmp(name, cap.nvtx_name) != 0)
		return;
	if (cap.nvtx_domain[0] && (!domain || strcmp(domain, cap.nvtx_domain) != 0))
		return;
	pthread_mutex_lock(&cap.lock);
	cap.nvtx_depth += open ? 1 : -1;
	if (cap.nvtx_depth < 0)
		cap.nvtx_depth = 0;
	depth = cap.nvtx_depth;
	pthread_mutex_unlock(&cap.lock);
	capture_gate(CBN_GATE_RANGE, depth > 0, CBN_CAUSE_NVTX);
}

/* --- the program's API (include/cbottleneck.h) and agent_api.h ------------ */

#define CAPTURE_API __attribute__((visibility("default")))

CAPTURE_API int cbn_start(void)
{
	if (!atomic_load(&agent.active))
		return -1;
	if (cap.range_api)
		return capture_gate(CBN_GATE_RANGE, 1, CBN_CAUSE_API);
	return capture_gate(CBN_GATE_MANUAL, 1, CBN_CAUSE_API);
}

CAPTURE_API int cbn_stop(void)
{
	if (!atomic_load(&agent.active))
		return -1;
	if (!cap.controlled) {
		/* The first stop makes a run without controls a controlled one. */
		struct cbn_file_header *h = agent.w.hdr;

		pthread_mutex_lock(&cap.lock);
		if (!cap.controlled && h) {
			atomic_store(&h->capture_opened_ns, h->start_mono_ns);
			atomic_store(&h->capture_first_ns, h->start_mono_ns);
			atomic_store(&h->capture.mode, CBN_CAPTURE_CONTROLLED);
			atomic_store(&h->capture.windows, 1);
			atomic_store(&h->capture.active, 1);
			snprintf(cap.spec, sizeof(cap.spec), "api");
			h->capture.spec_len = (uint32_t)strlen(cap.spec);
			memcpy(h->capture.spec, cap.spec, h->capture.spec_len);
			capture_record_at(h->start_mono_ns, CBN_CAPTURE_OPEN, CBN_CAUSE_START, NULL);
			capture_word = &h->capture_gates;
			cap.notified = 1;
			cap.controlled = 1;
		}
		pthread_mutex_unlock(&cap.lock);
	}
	if (cap.range_api)
		return capture_gate(CBN_GATE_RANGE, 0, CBN_CAUSE_API);
	return capture_gate(CBN_GATE_MANUAL, 0, CBN_CAUSE_API);
}

CAPTURE_API int cbn_agent_capture_active(void)
{
	return capture_is_on();
}

CAPTURE_API int cbn_agent_capture_set(int on, int cause)
{
	if (cause == CBN_CAUSE_CUDA_PROFILER || cause == CBN_CAUSE_API)
		return cap.range_api ? capture_gate(CBN_GATE_RANGE, on != 0, cause) : capture_is_on();
	return capture_gate(CBN_GATE_MANUAL, on != 0, cause);
}

CAPTURE_API void cbn_agent_capture_listen(void (*fn)(int active))
{
	pthread_mutex_lock(&cap.lock);
	cap.listener = fn;
	pthread_mutex_unlock(&cap.lock);
}

/*
 * The CUDA layer's flusher, every few milliseconds: tell the listener of an
 * edge the launcher made (the time gate, ctl, the toggle signal), which has
 * no thread in the program to do it.  0 without capture controls.
 */
CAPTURE_API int cbn_agent_capture_poll(void)
{
	void (*fn)(int) = NULL;
	int on;

	if (!cap.controlled)
		return 0;
	pthread_mutex_lock(&cap.lock);
	on = capture_is_on();
	if (cap.notified != on) {
		cap.notified = on;
		fn = cap.listener;
	}
	pthread_mutex_unlock(&cap.lock);
	if (fn)
		fn(on);
	return 1;
}

CAPTURE_API int cbn_agent_capture_api(void)
{
	return cap.range_api;
}
