#!/bin/sh
# run_bounded.sh FUZZER WORKDIR [-flags...] CORPUS_DIR...: a bounded libFuzzer
# run for ctest (fuzz.<name>.run): new inputs go to a fresh WORKDIR (the first
# corpus folder libFuzzer writes to), the given folders are only read. Prints
# libFuzzer's last status line (inputs executed, cov, ft) on success.
set -u
bin=$1 work=$2
shift 2
rm -rf "$work" && mkdir -p "$work/corpus" || exit 1
flags="" dirs=""
for a in "$@"; do
  case "$a" in
    -*) flags="$flags $a" ;;
    *) [ -d "$a" ] && dirs="$dirs $a" ;;
  esac
done
# shellcheck disable=SC2086
"$bin" $flags "$work/corpus" $dirs >"$work/log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  tail -n 60 "$work/log"
  echo "run_bounded: $bin exit $rc (log: $work/log; reproducer: $work/crash-*)"
  exit 1
fi
grep -E '^#[0-9]+' "$work/log" | tail -n 1
exit 0
