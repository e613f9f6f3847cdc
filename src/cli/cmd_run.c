/*
 * cmd_run.c — `cbottleneck [OPTIONS] PROGRAM [ARGS...]`: check the program,
 * run it under the agent, wait for its whole process tree, record
 * session.json, then load, analyse and report the session (and gate it with
 * --baseline).  Exit statuses: docs/cli.md.
 *
 * A statically linked program cannot load the agent: it is sampled from
 * outside instead (outside.c).
 *
 * Rank mode (docs/distributed.md, "Many nodes: one launcher per rank"): a
 * launcher started with a rank in its environment (`mpirun -np 64
 * cbottleneck -o DIR -- ./train`) records into DIR/rank-NNNNN and reports
 * nothing; `cbottleneck report DIR` merges the ranks afterwards.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis.h"
#include "cbn_rank_env.h"
#include "cli.h"
#include "compare.h"
#include "load.h"

/* The variable a rank came from, for messages. */
static const char *rank_env_name(uint32_t source)
{
	switch (source) {
	case CBN_RANK_OMPI:
		return "OMPI_COMM_WORLD_RANK";
	case CBN_RANK_PMIX:
		return "PMIX_RANK";
	case CBN_RANK_PMI:
		return "PMI_RANK";
	case CBN_RANK_SLURM:
		return "SLURM_PROCID";
	case CBN_RANK_TORCH:
		return "RANK";
	}
	return "the environment";
}

static int run_status(int st)
{
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 125;
}

/* What the agent is told (spawn.h) from the options, the agent's libraries
 * found and the session directory; mpi is PATH_MAX bytes for the MPI
 * layer's path. */
static void spawn_env_fill(struct spawn_env *env, const struct cli_opts *o, const char *agent,
			   const char *cuda, const char *session, const char *mem, char *mpi,
			   int outside)
{
	memset(env, 0, sizeof(*env));
	env->agent = agent;
	env->cuda = cuda;
	env->session = session;
	env->freq = o->freq;
	env->depth = o->depth;
	env->buffer_mb = o->buffer_mb;
	env->quiet = o->quiet;
	env->no_cuda = o->no_cuda;
	env->verbose = o->verbose;
	env->signal = o->signal;
	env->mem_lib = o->memory && strstr(o->memory, "host") ? mem : NULL;
	env->mpi_lib = session_find_mpi(agent, mpi, PATH_MAX) == 0 ? mpi : NULL;
	env->memory = o->memory;
	env->memory_rate = o->memory_rate;
	env->schedule = o->schedule;
	env->capture_range = o->capture_range;
	env->toggle_signal = o->toggle_signal;
	env->step_regex = o->step_regex;
	env->delay_ns = o->delay_ns;
	env->duration_ns = o->duration_ns;
	env->ring_ns = o->ring_ns;
	env->offcpu_hz = o->offcpu_hz;
	env->python_off = o->python_view == PROF_PYTHON_OFF;
	env->py_calls = env->python_off ? 0 : o->py_calls;
	env->wait_all = o->wait_all;
	if (outside) /* a static program: plainly, sampled from outside */
		outside_arm(env, o, session);
}

/* session.json's record of the run that ended with res. */
static void run_meta_fill(struct session_meta *meta, char **targv, const struct spawn_result *res,
			  const struct cli_opts *o)
{
	meta->argv = targv;
	meta->exit_status = WIFEXITED(res->status) ? WEXITSTATUS(res->status) : -1;
	meta->exit_signal = WIFSIGNALED(res->status) ? WTERMSIG(res->status) : 0;
	meta->start_mono_ns = res->start_ns;
	meta->end_mono_ns = res->end_ns;
	meta->user_ns = res->user_ns;
	meta->sys_ns = res->sys_ns;
	meta->launcher_ns = res->launcher_ns;
	meta->frequency_hz = (double)o->freq;
}

/* Load, analyse and write the outputs of the session of a run that ended
 * with status (the program's exit status, the launcher's unless an output
 * or the gate decides otherwise); *keep: the session must stay (an output
 * could not be written).  Returns the launcher's exit status. */
static int run_report(struct cli_opts *o, const char *session, char **targv, int status,
		      int *keep)
{
	struct profile *p = NULL;
	struct analysis an = {0};
	char err[1024];
	int ret = status, lr, failed;

	lr = cli_load(session, o, &p, err, sizeof(err));
	if (lr == PROF_LOAD_NOMEM) {
		ret = CLI_EXIT_NOMEM;
		goto out;
	}
	if (lr < 0) {
		fprintf(stderr, "cbottleneck: no profile: %s\n", err);
		if (o->baseline) {
			fprintf(stderr, "cbottleneck: exit status %d from the regression gate (%s)\n",
				CMP_UNMEASURABLE, cli_gate_word(CMP_UNMEASURABLE));
			ret = CMP_UNMEASURABLE;
		}
		goto out;
	}
	if (cli_analyse(p, o, &an) != 0) {
		ret = CLI_EXIT_NOMEM;
		goto out;
	}
	failed = cli_write_outputs(&an, o, o->json);
	if (failed == CLI_EXIT_USAGE)
		ret = CLI_EXIT_USAGE;
	else if (failed && ret == 0)
		ret = CLI_EXIT_REFUSED;
	/* An output that could not be written after all (a full disk, a
	 * directory removed meanwhile): the run is not lost. */
	if (failed && !o->output_dir) {
		*keep = 1;
		fprintf(stderr, "cbottleneck: the session is kept in %s: write the report and "
			"files again with 'cbottleneck report [OPTIONS] %s', then remove it\n",
			session, session);
	}
	if (o->baseline && !failed) {
		if (status != 0) {
			fprintf(stderr, "cbottleneck: %s failed (exit status %d), so the gate cannot "
				"measure it: exit status %d\n", targv[0], status, CMP_UNMEASURABLE);
			ret = CMP_UNMEASURABLE;
		} else {
			ret = cli_gate(o, &an, o->json ? o->json : "this run");
			fprintf(stderr, "cbottleneck: exit status %d from the regression gate (%s), "
				"not from %s\n", ret, cli_gate_word(ret), targv[0]);
		}
	}
out:
	analysis_free(&an);
	prof_free(p);
	return ret;
}

/* preflight, and for a static program whether the options let it be
 * sampled from outside (*outside: 1, outside.c). */
static int run_preflight(const struct cli_opts *o, const char *prog, char *path, size_t len,
			 int *outside)
{
	int ret = preflight(prog, path, len);

	if (ret != PREFLIGHT_STATIC)
		return ret;
	*outside = 1;
	return outside_check(o);
}

int cmd_run(int argc, char **argv)
{
	struct cli_opts o;
	struct spawn_env env;
	struct spawn_result res;
	struct session_meta meta;
	char path[PATH_MAX], agent[PATH_MAX], cuda[PATH_MAX], session[PATH_MAX], mem[PATH_MAX];
	char mpi[PATH_MAX], rank_dir[PATH_MAX];
	uint32_t running[64];
	struct cbn_rank_env rank = {-1, -1, 0, CBN_RANK_NONE};
	char **targv;
	int ret, status, have_session = 0, keep = 0, outside = 0;

	ret = cli_parse_opts(argc, argv, CLI_MODE_RUN, &o);
	if (ret < 0 && o.attach_pid)
		ret = cmd_attach(&o, argc - optind);
	if (ret >= 0)
		goto out;
	if (optind >= argc) {
		ret = cli_usage_error("no program to run: cbottleneck [OPTIONS] PROGRAM [ARGS...]");
		goto out;
	}
	targv = argv + optind;
	if (cli_args_only()) {
		ret = 0;
		goto out;
	}
	ret = cli_outputs_preflight(&o);
	if (ret)
		goto out;
	cbn_rank_from_env(getenv, &rank);
	if (cbn_rank_is_job_launcher(targv[0]))
		rank.rank = -1; /* `cbottleneck -- mpirun ...`: follow every rank */
	if (rank.rank >= 0 && !o.output_dir) {
		/* A private temporary directory per rank could never be merged. */
		ret = cli_usage_error("this launcher runs as rank %d of a distributed job (from %s), "
				      "so it needs -o DIR on a filesystem every rank can reach: "
				      "each rank records into DIR/rank-NNNNN",
				      (int)rank.rank, rank_env_name(rank.source));
		goto out;
	}
	ret = run_preflight(&o, targv[0], path, sizeof(path), &outside);
	if (ret)
		goto out;
	ret = session_find_agent(agent, sizeof(agent), cuda, sizeof(cuda));
	if (ret)
		goto out;
	if (o.memory && strstr(o.memory, "host")) {
		ret = session_find_mem(agent, mem, sizeof(mem));
		if (ret)
			goto out;
	}
	if (rank.rank >= 0) {
		/* DIR itself is made on the way (mkdir -p; other ranks may race
		 * us to it: EEXIST is fine), and only our rank's directory is
		 * cleared of an older run. */
		if (snprintf(rank_dir, sizeof(rank_dir), "%s/rank-%05d", o.output_dir,
			     (int)rank.rank) >= (int)sizeof(rank_dir)) {
			ret = cli_usage_error("-o %s: path too long", o.output_dir);
			goto out;
		}
		ret = session_create(rank_dir, session, sizeof(session));
	} else {
		ret = session_create(o.output_dir, session, sizeof(session));
	}
	if (ret)
		goto out;
	have_session = 1;

	spawn_env_fill(&env, &o, agent, cuda, session, mem, mpi, outside);
	memset(&meta, 0, sizeof(meta));
	env_collect(&meta.env);
	ret = spawn_run(path, targv, &env, &res);
	session_protect(o.output_dir ? NULL : session);
	spawn_signals_release();
	if (ret)
		goto out;
	meta.nrunning = session_running(running, sizeof(running) / sizeof(running[0]));
	meta.running = running;
	if (o.output_dir)
		session_trim(session);
	if (res.exec_errno) {
		fprintf(stderr, "cbottleneck: %s: %s\n", targv[0], strerror(res.exec_errno));
		ret = res.exec_errno == ENOENT ? CLI_EXIT_NOTFOUND : CLI_EXIT_NOEXEC;
		goto out;
	}
	status = run_status(res.status);
	if (WIFSIGNALED(res.status) && !o.quiet)
		fprintf(stderr, "cbottleneck: %s was killed by signal %d (%s)\n", targv[0],
			WTERMSIG(res.status), strsignal(WTERMSIG(res.status)));

	run_meta_fill(&meta, targv, &res, &o);
	if (session_meta_write(session, &meta) < 0 && o.verbose)
		fprintf(stderr, "cbottleneck: cannot write %s/session.json\n", session);
	kernel_symbols_write(session, o.verbose);
	jitmaps_collect(session, o.verbose);
	if (o.verbose)
		session_notes_echo(session);

	ret = status;
	if (rank.rank >= 0) {
		/* No report per rank: the program's output stays its own.  One
		 * line from rank 0 says how to see them all. */
		if (rank.rank == 0 && !o.quiet)
			fprintf(stderr, "cbottleneck: each rank's session is in %s/rank-NNNNN; "
				"merge them with: cbottleneck report %s\n", o.output_dir,
				o.output_dir);
		goto out;
	}
	ret = run_report(&o, session, targv, status, &keep);
out:
	if (have_session) {
		if (!o.output_dir && !keep)
			session_remove(session);
		else if (!o.quiet && ret != CLI_EXIT_USAGE && rank.rank < 0)
			fprintf(stderr, "cbottleneck: session kept in %s (cbottleneck report %s)\n",
				o.output_dir, o.output_dir);
	}
	cli_opts_free(&o);
	return ret;
}
