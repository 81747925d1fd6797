#!/usr/bin/env bash
# Install Solvent into a temporary prefix, then build and run a small
# program against the installed copy twice: with pkg-config and with CMake's
# find_package(Solvent).
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null

# 0. the tool: the launcher finds solvent-run installed beside it
"$tmp/prefix/bin/solvent" --version | grep -q '^solvent ' || { echo "FAIL: the installed solvent does not run" >&2; exit 1; }
"$tmp/prefix/bin/solvent" info >/dev/null || { echo "FAIL: the installed 'solvent info' failed" >&2; exit 1; }

# the browser app's page, installed where `solvent serve` looks for it (BINDIR/../share/solvent/web)
for f in index.html app.js app.css; do
  [[ -f "$tmp/prefix/share/solvent/web/$f" ]] || { echo "FAIL: share/solvent/web/$f not installed" >&2; exit 1; }
done

# 1. pkg-config, shared library (the usual `cc $(pkg-config --cflags --libs solvent)`)
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib64/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig"
libdir=$(pkg-config --variable=libdir solvent)
cc -std=c17 -o "$tmp/consumer_pc" "$src/examples/consumer/consumer.c" $(pkg-config --cflags --libs solvent)
LD_LIBRARY_PATH="$libdir" "$tmp/consumer_pc"

# The CUDA back end module (built with CUDA) is installed beside the library,
# finds its CUDA libraries there, and the library itself links none of them.
if [[ -e "$build/libsolvent-cuda.so" ]]; then
  [[ -e "$libdir/libsolvent-cuda.so" ]] || { echo "FAIL: libsolvent-cuda.so not installed in $libdir" >&2; exit 1; }
  if ldd "$libdir/libsolvent-cuda.so" | grep 'not found'; then
    echo "FAIL: the installed CUDA module's libraries are not found" >&2; exit 1
  fi
fi
if ldd "$libdir/libsolvent.so" | grep -E 'lib(cudart|cublas|cusolver)'; then
  echo "FAIL: the installed libsolvent.so links a CUDA library" >&2; exit 1
fi

# 2. CMake package, static library (its dependencies come from the package config)
mkdir -p "$tmp/cm"
cmake -S "$src/examples/consumer" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cm" >/dev/null
"$tmp/cm/consumer"
# 3. the manual pages and the bash completion, generated from --help (cmake/SolventManual.cmake)
man1="$tmp/prefix/share/man/man1"
if command -v help2man >/dev/null; then
  for page in solvent solvent-sweep solvent-solve solvent-ode solvent-codegen; do
    [[ -s "$man1/$page.1" ]] || { echo "FAIL: manual page $page.1 not installed" >&2; exit 1; }
  done
  grep -q -- 'max\\-exact' "$man1/solvent-sweep.1" || { echo "FAIL: solvent-sweep.1 lacks --max-exact" >&2; exit 1; }
fi
comp="$tmp/prefix/share/bash-completion/completions/solvent"
[[ -s "$comp" ]] || { echo "FAIL: bash completion not installed" >&2; exit 1; }
complete_words() { bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _solvent; echo "${COMPREPLY[*]}"' _ "$comp" "$@"; }
[[ $(complete_words solvent swe) == sweep ]] || { echo "FAIL: completion of 'solvent swe': $(complete_words solvent swe)" >&2; exit 1; }
[[ $(complete_words solvent sweep --pl) == --plot ]] || { echo "FAIL: completion of 'solvent sweep --pl'" >&2; exit 1; }
[[ $(complete_words solvent ode ro) == rober ]] || { echo "FAIL: completion of 'solvent ode ro'" >&2; exit 1; }
echo "install test: pkg-config and find_package consumers both ran; manual pages and completion installed"
