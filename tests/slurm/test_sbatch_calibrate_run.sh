#!/usr/bin/env bash
# The bundled calibrate-cpu.sbatch, then run-cpu.sbatch held until it succeeds (--dependency=afterok) and given its
# calibration through MESHLOOM_CALIBRATION: both complete, the run is verified and priced by that calibration.
# shellcheck source=slurm_test_lib.sh
source "$(dirname "$0")/slurm_test_lib.sh"

export MESHLOOM_LAUNCH=$launch
cal=$(MESHLOOM_OUT=$work/cal.json submit --output="$work/calibrate.out" "$scripts/calibrate-cpu.sbatch" \
  --collectives all_reduce,all_gather -b 1K -e 64K -f 4 -n 5 -w 1)
run=$(MESHLOOM_OUT=$work/run.jsonl MESHLOOM_CALIBRATION=$work/cal.json submit --output="$work/run.out" \
  --dependency="afterok:$cal" "$scripts/run-cpu.sbatch" --tensor 64,64 --src 'S(0)S(1)' --dst RR --iterations 3)
echo "submitted calibrate-cpu.sbatch as job $cal, run-cpu.sbatch as job $run after it"
wait_job "$cal" 45
expect_job "$cal" COMPLETED 0:0
wait_job "$run" 45
expect_job "$run" COMPLETED 0:0

job=$cal
expect_jq cal.json '.[0].format == "meshloom-calibration" and .[0].world == 2 and (.[0].groups | length) > 0' \
  "a calibration with curves by group shape"
expect_jsonl "$work/cal.jsonl"
expect_jq cal.jsonl '.[0].type == "config" and .[0].slurm.job_id == $id' "calibrate's config record naming its job"
job=$run
expect_jsonl "$work/run.jsonl"
expect_jq run.jsonl '.[0].type == "config" and .[0].slurm.job_id == $id and .[0].models[0] == "calibrated"' \
  "run's config record naming its job, the calibrated model first"
expect_jq run.jsonl 'any(.[]; .type == "summary" and .verified == true and .predicted.calibrated > 0)' \
  "a verified plan priced by the calibration"
echo "PASS: jobs $cal and $run completed"
