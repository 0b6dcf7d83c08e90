#!/usr/bin/env bash
# The bundled resources/slurm/bench-cpu.sbatch, submitted with sbatch as a user would (a small sweep passed as its
# arguments): the job completes, srun starts its 2 ranks through PMIx, every result is verified (--check: 0 wrong
# elements), and the JSON Lines stream parses with a config record naming this very job.
# shellcheck source=slurm_test_lib.sh
source "$(dirname "$0")/slurm_test_lib.sh"

export MESHLOOM_LAUNCH=$launch MESHLOOM_OUT=$work/bench.jsonl
job=$(submit --output="$work/bench.out" "$scripts/bench-cpu.sbatch" -b 1K -e 16K -f 4 -n 3 -w 1)
echo "submitted bench-cpu.sbatch as job $job"
wait_job "$job" 45
expect_job "$job" COMPLETED 0:0

expect_jsonl "$work/bench.jsonl"
expect_jq bench.jsonl '.[0].type == "config" and .[0].command == "bench"' "the config record first"
expect_jq bench.jsonl '.[0].slurm.job_id == $id' "the config's slurm.job_id to be the job sbatch returned"
expect_jq bench.jsonl '.[0].slurm.step_id == "0" and .[0].slurm.nodelist != null and .[0].slurm.ntasks == "2"' \
  "the srun step 0 of the job, its node list and 2 tasks in the config's slurm object"
expect_jq bench.jsonl '.[0].world == 2 and (.[0].hosts | length) == 2 and .[0].check == true' \
  "a world of 2 ranks, both hosts, --check on"
# One result per (axis, collective, size), each checked and right.
expect_jq bench.jsonl '[.[] | select(.type == "result")] | length > 0' "result records"
expect_jq bench.jsonl '([.[] | select(.type == "result")] | length)
                        == (.[0].axes | length) * (.[0].collectives | length) * (.[0].sizes | length)' \
  "one result per axis, collective and size"
expect_jq bench.jsonl 'all(.[] | select(.type == "result"); .checked == true and .wrong == 0)' \
  "every result checked with 0 wrong elements"
expect_jq bench.jsonl '.[-1].type == "summary" and .[-1].ok == true and .[-1].wrong == 0' "an ok summary last"
grep -q "0 wrong elements: OK" "$work/bench.out" || { show "$work/bench.out"; fail "the job's output lacks '0 wrong elements: OK'"; }
# The records stay readable with the slurm object: calibrate --from fits them.
"$launch" calibrate --from bench.jsonl --out "$work/from.calibration.json" >"$work/from.out" 2>&1 ||
  { show "$work/from.out"; fail "calibrate --from could not read the job's records"; }
echo "PASS: job $job completed; $(jq -s '[.[] | select(.type == "result")] | length' bench.jsonl) results verified"
