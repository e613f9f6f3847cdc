#!/usr/bin/env bash
# sizes.sh — the rooms that hold more than one job: C files over a line limit
# and functions over a length limit (CONTRIBUTING.md, "Shape").
#
#   tools/sizes.sh [--check] [--file-max N] [--func-max N] [DIR|FILE...]
#     DIR...       folders searched for *.c and *.h (default: src)
#     --file-max   a .c file over N lines is listed (default 1000; headers
#                  hold declarations and tables, and are not counted)
#     --func-max   a function over N lines, from its "{" to its "}", is
#                  listed (default 120)
#     --check      exit 1 when anything is listed (the ctest check
#                  tools.sizes runs it over the folders tests/CMakeLists.txt
#                  names)
#   prints "FILE: N lines" and "FILE:LINE: FUNC: N lines", longest first.
#
# A function is what the code style makes of one (.clang-format, Linux
# braces): a "{" alone at the start of a line after its signature, up to the
# next "}" alone at the start of a line.  Its name is the last identifier
# followed by "(" on the lines of the signature.
set -euo pipefail

file_max=1000 func_max=120 check=0
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--check) check=1 ;;
	--file-max) file_max=$2; shift ;;
	--func-max) func_max=$2; shift ;;
	-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "sizes.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) args+=("$1") ;;
	esac
	shift
done
[ ${#args[@]} -gt 0 ] || args=(src)

files=$(find "${args[@]}" -type f \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort)
[ -n "$files" ] || { echo "sizes.sh: no C files in ${args[*]}" >&2; exit 2; }

# shellcheck disable=SC2086
out=$(awk -v file_max="$file_max" -v func_max="$func_max" '
	FNR == 1 { if (prev ~ /\.c$/ && plines > file_max) printf "%d\t%s: %d lines\n", plines, prev, plines
		   prev = FILENAME; sig = ""; start = 0 }
	{ plines = FNR }
	/^\{[ \t]*$/ { start = FNR; name = sig; next }
	/^\}/ && start {
		n = FNR - start + 1
		if (n > func_max) printf "%d\t%s:%d: %s: %d lines\n", n, FILENAME, start, name, n
		start = 0; sig = ""; next
	}
	!start && /^[A-Za-z_]/ {
		line = $0
		# the last identifier followed by "(" names it
		while (match(line, /[A-Za-z_][A-Za-z_0-9]*[ \t]*\(/)) {
			sig = substr(line, RSTART, RLENGTH); sub(/[ \t]*\($/, "", sig)
			line = substr(line, RSTART + RLENGTH)
		}
	}
	END { if (prev ~ /\.c$/ && plines > file_max) printf "%d\t%s: %d lines\n", plines, prev, plines }
' $files | sort -t"$(printf '\t')" -k1,1nr | cut -f2-)

if [ -n "$out" ]; then
	echo "$out"
	if [ $check = 1 ]; then
		echo "sizes.sh: over $file_max lines a file or $func_max a function: split by job" >&2
		exit 1
	fi
fi
exit 0
