# shellcheck shell=bash
# Sourced by the tests labelled `slurm` (tests/slurm/test_*.sh), which CTest runs as
#   bash test_X.sh <cluster env file> <meshloom-launch> <source dir>
# once the fixture test slurm_cluster_start has started the private cluster (slurm_cluster.sh). Gives them the
# cluster's environment, a scratch directory, and helpers whose every wait is bounded.
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 <slurm.env of slurm_cluster.sh> <meshloom-launch> <source dir>" >&2
  exit 2
fi
slurm_env=$1
launch=$2
source_dir=$3
# shellcheck disable=SC2034 # used by the tests that source this file
scripts=$source_dir/resources/slurm

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

[ -f "$slurm_env" ] || fail "$slurm_env is missing: the cluster is not running (the fixture test slurm_cluster_start failed or did not run)"
[ -x "$launch" ] || fail "$launch is not an executable (build the meshloom-launch target)"
command -v jq >/dev/null || fail "jq not found (scripts/install-deps.sh installs it)"
# shellcheck source=/dev/null
source "$slurm_env"

work=$(mktemp -d "${TMPDIR:-/tmp}/meshloom-slurm-test.XXXXXX")
cleanup_work() { rm -rf -- "$work"; }
trap cleanup_work EXIT
cd "$work"

# Prints file $1 (when it exists) under a header, for a failure's context.
show() {
  if [ -f "$1" ]; then
    echo "----- $1 -----" >&2
    tail -n 60 "$1" >&2
  else
    echo "----- $1: not written -----" >&2
  fi
}

# sbatch ARGS...: submits, prints the job id. A refused submission fails the test with sbatch's message.
submit() {
  local out err
  err=$(mktemp)
  out=$(timeout 30 sbatch --parsable "$@" 2>"$err") || fail "sbatch $* was refused: $(cat "$err")"
  # sbatch may warn on standard error and still submit: the id is its standard output.
  [ -s "$err" ] && cat "$err" >&2
  rm -f "$err"
  out=${out%%;*}
  [[ $out =~ ^[0-9]+$ ]] || fail "sbatch $* printed '$out', not a job id"
  echo "$out"
}

# One field (JobState, ExitCode, StdOut, ...) of a job that slurmctld still holds (MinJobAge=600 in the fixture;
# there is no slurmdbd, so sacct has nothing).
job_field() {
  # A controller that does not answer once gives an empty field (callers treat it as not known yet), not an exit.
  { timeout 10 scontrol show job -o "$1" || true; } | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# wait_job ID SECONDS: waits until the job has ended. A job still pending or running after SECONDS is cancelled and
# the test fails with its state, the queue and its output.
wait_job() {
  local id=$1 limit=$2 state=""
  local deadline=$((SECONDS + limit))
  while [ "$SECONDS" -lt "$deadline" ]; do
    state=$(job_field "$id" JobState)
    case $state in
      PENDING | CONFIGURING | RUNNING | COMPLETING | SUSPENDED | REQUEUED | RESIZING | "") sleep 0.5 ;;
      *) return 0 ;;
    esac
  done
  echo "job $id still $state after $limit s: cancelling it" >&2
  timeout 10 scontrol show job "$id" >&2 || true
  timeout 10 squeue >&2 || true
  timeout 10 scancel "$id" || true
  show "$(job_field "$id" StdOut)"
  fail "job $id did not finish within $limit s"
}

# expect_job ID STATE EXITCODE: the ended job's state and exit code (Slurm's "code:signal"), else fail with its output.
expect_job() {
  local id=$1 want_state=$2 want_exit=$3 state exit_code
  state=$(job_field "$id" JobState)
  exit_code=$(job_field "$id" ExitCode)
  if [ "$state" != "$want_state" ] || [ "$exit_code" != "$want_exit" ]; then
    timeout 10 scontrol show job "$id" >&2 || true
    show "$(job_field "$id" StdOut)"
    fail "job $id ended $state with exit code $exit_code; expected $want_state with $want_exit"
  fi
}

# expect_jsonl FILE: every line of FILE is one JSON object (what the contract promises), else fail naming the line.
expect_jsonl() {
  local file=$1 n=0 line
  [ -s "$file" ] || fail "$file is missing or empty"
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    jq -e 'type == "object"' <<<"$line" >/dev/null 2>&1 || fail "$file line $n is not one JSON object: $line"
  done <"$file"
}

# expect_jq FILE FILTER WHAT: jq -s FILTER over the records of FILE must be true (--arg id "$job" is available),
# else fail saying WHAT was expected and showing the file.
expect_jq() {
  local file=$1 filter=$2 what=$3
  if ! jq -e -s --arg id "${job:-}" "$filter" "$file" >/dev/null; then
    show "$file"
    fail "$file: expected $what ($filter)"
  fi
}
