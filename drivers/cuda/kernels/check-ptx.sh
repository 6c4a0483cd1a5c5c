#!/bin/sh
# check-ptx.sh PTX: ptxas compiles the PTX file for sm_75 (the oldest
# target of its .target), or the test is skipped (77) where ptxas is not
# installed ($PTXAS, PATH, /usr/local/cuda/bin).
set -eu
ptxas=${PTXAS:-$(command -v ptxas || true)}
[ -n "$ptxas" ] || { [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas; } || true
if [ -z "$ptxas" ]; then
  echo "skip: no ptxas here (a CUDA toolkit's)"
  exit 77
fi
exec "$ptxas" -arch=sm_75 -o /dev/null "$1"
