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

# 1. pkg-config, shared library (the usual `cc $(pkg-config --cflags --libs solvent)`)
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib64/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig"
libdir=$(pkg-config --variable=libdir solvent)
cc -std=c17 -o "$tmp/consumer_pc" "$src/examples/consumer/consumer.c" $(pkg-config --cflags --libs solvent)
LD_LIBRARY_PATH="$libdir" "$tmp/consumer_pc"

# 2. CMake package, static library (its dependencies come from the package config)
mkdir -p "$tmp/cm"
cmake -S "$src/examples/consumer" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cm" >/dev/null
"$tmp/cm/consumer"
echo "install test: pkg-config and find_package consumers both ran"
