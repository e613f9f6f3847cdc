#!/bin/sh
# mkmini.sh BIN OUT — OUT is BIN stripped of everything, with MiniDebugInfo:
# an xz-compressed ELF holding only the symbols of functions that .dynsym
# lacks, in section .gnu_debugdata (the recipe Fedora's find-debuginfo uses).
set -e
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -D "$1" --format=posix --defined-only | awk '{ print $1 }' | sort >"$tmp/dynsyms"
nm "$1" --format=posix --defined-only | awk '$2 == "T" || $2 == "t" { print $1 }' | sort >"$tmp/funcsyms"
comm -13 "$tmp/dynsyms" "$tmp/funcsyms" >"$tmp/keep"
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$tmp/keep" \
	"$1" "$tmp/mini"
xz "$tmp/mini"
objcopy --strip-all --add-section .gnu_debugdata="$tmp/mini.xz" "$1" "$2"
