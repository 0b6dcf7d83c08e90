#!/usr/bin/env bash
# Direct launch: `srun --mpi=pmix -n 2 meshloom-launch calibrate` (no mpirun; srun makes the allocation and starts the
# ranks through PMIx) writes a calibration; `meshloom-launch plan --calibration` prices with it, and
# `srun --mpi=pmix -n 2 meshloom-launch run --calibration` predicts with it and verifies the plan on 2 ranks.
# shellcheck source=slurm_test_lib.sh
source "$(dirname "$0")/slurm_test_lib.sh"

# srun's --time (minutes) makes Slurm end a hung step; timeout(1) ends a hung srun.
srun_launch() {
  timeout -k 5 50 srun --mpi=pmix -n 2 --time=1 --job-name=meshloom-test "$launch" "$@"
}

if ! srun_launch calibrate --shape 2 --names dp --collectives all_reduce,all_gather -b 1K -e 64K -f 4 -n 5 -w 1 \
  --out "$work/cal.json" --jsonl "$work/cal.jsonl" >"$work/calibrate.out" 2>&1; then
  show "$work/calibrate.out"
  fail "srun --mpi=pmix -n 2 meshloom-launch calibrate failed"
fi
grep -q "wrote $work/cal.json" "$work/calibrate.out" || { show "$work/calibrate.out"; fail "calibrate did not say it wrote the file"; }
expect_jq cal.json '.[0].format == "meshloom-calibration" and .[0].backend == "mpi" and .[0].world == 2' \
  "a calibration of 2 mpi ranks"
expect_jq cal.json '[.[0].groups[] | select(.n == 2 and .hosts == 1) | .collective] | sort == ["all_gather", "all_reduce"]' \
  "curves of both collectives for groups of 2 ranks on 1 host"
expect_jsonl "$work/cal.jsonl"
expect_jq cal.jsonl '.[0].type == "config" and .[0].command == "calibrate" and .[0].world == 2' "calibrate's config record"
expect_jq cal.jsonl '(.[0].slurm.job_id | test("^[0-9]+$")) and .[0].slurm.step_id == "0" and .[0].slurm.job_name == "meshloom-test"' \
  "the srun job's id, step 0 and name in the config's slurm object"

# plan prices with it: the calibrated model, named in the header, a cost in microseconds.
"$launch" plan --mesh 2 --names dp --tensor 4096 --src 'S(0)' --dst R --calibration "$work/cal.json" >"$work/plan.out" 2>&1 ||
  { show "$work/plan.out"; fail "plan --calibration failed"; }
grep -q "cost model calibrated (mpi calibration" "$work/plan.out" || { show "$work/plan.out"; fail "plan did not use the calibrated model"; }
grep -Eq "^cost: [0-9.e+-]+ us$" "$work/plan.out" || { show "$work/plan.out"; fail "plan printed no cost in us"; }

# run under srun predicts with it and verifies every element.
if ! srun_launch run --mesh 2 --names dp --tensor 64,64 --src 'S(0)' --dst R --calibration "$work/cal.json" \
  --iterations 3 --jsonl "$work/run.jsonl" >"$work/run.out" 2>&1; then
  show "$work/run.out"
  fail "srun --mpi=pmix -n 2 meshloom-launch run --calibration failed"
fi
expect_jsonl "$work/run.jsonl"
expect_jq run.jsonl '.[0].type == "config" and .[0].models[0] == "calibrated" and (.[0].slurm.job_id | test("^[0-9]+$"))' \
  "run's config: the calibrated model first, and the srun job"
expect_jq run.jsonl 'any(.[]; .type == "summary" and .verified == true and .predicted.calibrated > 0)' \
  "a verified plan with a calibrated prediction"
echo "PASS: calibrate and run under srun --mpi=pmix; plan priced with the calibration"
