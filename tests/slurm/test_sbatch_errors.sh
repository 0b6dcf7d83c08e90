#!/usr/bin/env bash
# What goes wrong says so: sbatch's own refusal of a partition that does not exist, a launcher that is not there,
# and a job whose launcher rejects its arguments (exit 2, an error record in the JSON Lines). And every bundled
# script, GPU ones included (no GPU here), is valid bash whose #SBATCH lines sbatch accepts.
# shellcheck source=slurm_test_lib.sh
source "$(dirname "$0")/slurm_test_lib.sh"

# 1. A partition that does not exist: sbatch refuses the submission, exit status non-zero, with its message.
if out=$(timeout 30 sbatch --partition=meshloom-no-such-partition "$scripts/bench-cpu.sbatch" 2>&1); then
  fail "sbatch accepted a partition that does not exist: $out"
fi
grep -q "sbatch: error: Batch job submission failed: Invalid partition name specified" <<<"$out" ||
  fail "sbatch's message for an unknown partition was: $out"

# 2. MESHLOOM_LAUNCH names no program: the job fails at once, exit 127, saying what to set.
job=$(MESHLOOM_LAUNCH=$work/no-such-launcher submit --output="$work/missing.out" "$scripts/bench-cpu.sbatch")
wait_job "$job" 30
expect_job "$job" FAILED 127:0
grep -qF "error: $work/no-such-launcher not found: set MESHLOOM_LAUNCH" "$work/missing.out" ||
  { show "$work/missing.out"; fail "job $job did not say the launcher is missing"; }

# 3. The launcher rejects an argument: every rank exits 2 before any collective, the job FAILED with exit code 2,
#    and the JSON Lines hold the config-less error record.
job=$(MESHLOOM_LAUNCH=$launch MESHLOOM_OUT=$work/bad.jsonl submit --output="$work/bad.out" "$scripts/bench-cpu.sbatch" \
  --collectives all_reduce,frob)
wait_job "$job" 30
expect_job "$job" FAILED 2:0
grep -q 'error: ValueError: .*frob' "$work/bad.out" || { show "$work/bad.out"; fail "job $job did not name the bad collective"; }
expect_jsonl "$work/bad.jsonl"
expect_jq bad.jsonl 'any(.[]; .type == "error" and (.message | test("frob")))' "an error record naming the bad value"

# 4. Every bundled script parses, and sbatch accepts its options (--test-only: nothing is run). The GPU ones ask
#    for GPUs, which this cluster has none of: sbatch must refuse them for that reason alone.
for s in "$scripts"/*.sbatch; do
  bash -n "$s" || fail "$s is not valid bash"
  grep -q '^#SBATCH --output=' "$s" || fail "$s has no #SBATCH --output line"
  case $s in
    *-gpu.sbatch)
      grep -q '^#SBATCH --gpus-per-task=1$' "$s" || fail "$s does not ask for one GPU per task"
      grep -q -- '--backend nccl' "$s" || fail "$s does not use --backend nccl"
      if out=$(timeout 30 sbatch --test-only "$s" 2>&1); then fail "sbatch --test-only accepted $s without GPUs: $out"; fi
      grep -Eqi "gres|gpu|Requested node configuration is not available" <<<"$out" ||
        fail "sbatch --test-only refused $s for another reason than GPUs: $out"
      ;;
    *)
      grep -q -- '--backend' "$s" && fail "$s (CPU) names a backend"
      out=$(timeout 30 sbatch --test-only "$s" 2>&1) || fail "sbatch --test-only refused $s: $out"
      ;;
  esac
done
all=("$scripts"/*.sbatch)
[ ${#all[@]} -eq 6 ] || fail "expected 6 scripts in $scripts, found ${#all[@]}"
echo "PASS: the refusals and failures say what went wrong; ${#all[@]} scripts accepted"
