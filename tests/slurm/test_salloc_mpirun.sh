#!/usr/bin/env bash
# A job that calls mpirun: `salloc -n 2 mpirun meshloom-launch run` (Open MPI reads the allocation from Slurm and
# starts its daemons with srun). The world is the allocation's 2 ranks, the plan verifies, and the config record
# names the job salloc granted.
# shellcheck source=slurm_test_lib.sh
source "$(dirname "$0")/slurm_test_lib.sh"

if ! timeout -k 5 50 salloc -n 2 --time=1 --job-name=meshloom-salloc mpirun "$launch" run --mesh 2 --names dp \
  --tensor 64,64 --src 'S(0)' --dst R --iterations 3 --jsonl "$work/run.jsonl" >"$work/salloc.out" 2>&1; then
  show "$work/salloc.out"
  fail "salloc -n 2 mpirun meshloom-launch run failed"
fi
job=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' "$work/salloc.out")
[ -n "$job" ] || { show "$work/salloc.out"; fail "salloc did not say which job it granted"; }
expect_jsonl "$work/run.jsonl"
expect_jq run.jsonl '.[0].type == "config" and .[0].world == 2 and .[0].slurm.job_id == $id and .[0].slurm.job_name == "meshloom-salloc"' \
  "run's config: a world of 2, the job salloc granted"
expect_jq run.jsonl 'any(.[]; .type == "summary" and .verified == true)' "a verified plan"
echo "PASS: salloc job $job ran mpirun with 2 ranks"
