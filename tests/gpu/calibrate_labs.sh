#!/bin/bash
# The labs' speed thresholds, measured (issue 27): every lab's reference solution through its checker on
# the cuda backend with --json and 20 rounds, at each rank count, then one table of every timing: the
# solution's time over the reference's, median and quartiles of the rounds, the threshold in force, the
# grade it gets and the threshold the measurement suggests. The thresholds in labs/*/check.lua are set
# from this table (docs/labs/README.md says on which machine). With more ranks than GPUs the ranks share
# them under CUDA MPS. Its log: $OUT/lab_calibration.log (else <build>/gpu-logs/lab_calibration.log).
#   tests/gpu/calibrate_labs.sh <build-dir> [ranks...]      e.g. tests/gpu/calibrate_labs.sh .carry/build 2 4
set -u
. "$(dirname "$0")/gpu_env.sh"
shift $(($# > 0 ? 1 : 0))
ranks=${*:-2 4}
log=$logs/lab_calibration.log
export IRIS_BACKEND=${IRIS_BACKEND:-cuda}
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
most=0
for n in $ranks; do [ "$n" -gt "$most" ] && most=$n; done
cd "$root"

{ echo "=== $(date -u '+%Y-%m-%d %H:%M UTC'), $gpus GPU(s): $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | xargs)"
  echo "=== $("$iris" --version)"; } | tee "$log"
if [ "$most" -gt "$gpus" ] && [ "$gpus" -gt 0 ]; then
  mps_start "up to $most ranks on $gpus GPU(s)"
fi

reports=()
for dir in labs/[0-9][0-9]-*; do
  lab=$(basename "$dir")
  for n in $ranks; do
    report=$logs/calibration_${lab:0:2}_np$n.json
    echo "=== lab ${lab:0:2}'s solution at $n ranks, --json --runs 20" | tee -a "$log"
    # The report is the last line of standard output; the readable one (standard error) goes to the log.
    timeout 900 mpirun --oversubscribe --bind-to none -np "$n" "$iris" lab check "${lab:0:2}" "$dir/solution.lua" \
      --json --runs 20 2>>"$log" | tail -n 1 > "$report"
    echo "=== exit ${PIPESTATUS[0]}" | tee -a "$log"
    reports+=("$report")
  done
done
"$iris" "$(dirname "$0")/lab_calibration.lua" "${reports[@]}" | tee -a "$log"
