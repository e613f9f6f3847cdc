#!/bin/bash
# agent_main_exit — a program whose main thread calls pthread_exit ends when
# its last thread returns, under every mode that starts an agent thread
# (--off-cpu's sampler, --memory's and --delay's background thread): those
# threads block every signal, so if they outlived the program the process
# would never exit and not even SIGTERM could end it.
. "$(dirname "$0")/lib/common.bash"
need_cbn
need_example main_exit

for mode in "" "--off-cpu=200" "--memory" "--delay 1ms" "--off-cpu --memory"; do
	# shellcheck disable=SC2086  # mode is several words
	run_cbn -q $mode -o "$T/s$RANDOM" -- timeout -k 1 10 "$EXAMPLES/main_exit"
	expect_rc 0
	grep_out '^main_exit: worker done'
done
exit 0
