#!/usr/bin/env bash
# Runs every worked example of the docs and compares its output verbatim.
#
# Usage: check_examples.sh <source-dir> <bin-dir> <page.md>...
# An example is a line `$ <command>` inside a ```console block; the lines after it, up to the next `$ ` line or
# the end of the block, are its expected stdout and stderr together. Commands run with bash from the source
# directory, with <bin-dir> first on PATH. Prints one line per example and "N passed, N failed".
set -u
src=$1 bin=$2
shift 2
export PATH="$bin:$PATH"
passed=0 failed=0

check() {  # page line command expected
  local actual
  actual=$(cd "$src" && bash -c "$3" 2>&1)
  if [ "$actual" == "$4" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $1:$2: \$ $3"
    diff <(printf '%s\n' "$4") <(printf '%s\n' "$actual") | sed 's/^/    /'
  fi
}

for page in "$@"; do
  in_block=0 lineno=0 cmd="" cmd_line=0 expected=""
  while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    if [ $in_block -eq 0 ]; then
      [[ $line == '```console'* ]] && in_block=1
      continue
    fi
    if [[ $line == '```'* || $line == '$ '* ]]; then
      [ -n "$cmd" ] && check "$page" "$cmd_line" "$cmd" "$(printf '%s' "$expected")"
      cmd="" expected=""
      if [[ $line == '$ '* ]]; then
        cmd=${line#'$ '} cmd_line=$lineno
      else
        in_block=0
      fi
      continue
    fi
    expected+="$line"$'\n'
  done < "$page"
done
echo "docs examples: $passed passed, $failed failed"
[ $failed -eq 0 ]
