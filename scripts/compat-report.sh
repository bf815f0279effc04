#!/usr/bin/env bash
# compat-report.sh [--table] OUT_DIR -- summarise a scripts/compat.sh run (needs jq): counts,
# fallbacks, skips and failures as JSON; with --table, one Markdown row per problem instead
# (level order, then problem number) with its inputs' size and where its wall time went.
set -u
table=0
[ "${1:-}" = --table ] && { table=1; shift; }
out=${1:?usage: compat-report.sh [--table] OUT_DIR}
hidden='["normal","uniform_shifted","mixed_magnitude","heavy_tailed"]'
if [ $table = 1 ]; then
    echo "| problem | status | hidden valid | fallback domains | inputs GiB | probe draws | wall s | probe s | gen s | forward s |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    jq -rs '
      def size: {"float64":8,"int64":8,"float32":4,"int32":4,"float16":2,"bfloat16":2,"int16":2}[.dtype] // 1;
      def gib: [.inputs.probe[]? | select(.kind == "tensor") | (reduce .shape[] as $d (1; . * $d)) * size] | add // 0 | . / 1073741824;
      def num: (.problem.name | capture("^(?<n>[0-9]+)").n | tonumber);
      def f1: if . == null then "" else (. * 10 | round / 10 | tostring) end;
      sort_by([.problem.path, num]) | sort_by(.problem.path | capture("level(?<l>[0-9])").l) | .[] |
      [ "level" + (.problem.path | capture("level(?<l>[0-9])").l) + "/" + .problem.name, .status,
        ([.cases[] | select(.distribution != "nominal" and (.skipped | not))] | length | tostring) + " of 4",
        ([.cases[] | select(.distribution != "nominal" and (.skipped | not) and .domain != "raw") | .distribution + "/" + .domain] | join(", ")),
        (gib | . * 100 | round / 100 | tostring),
        ([.inputs.probe[]? | .probes // empty] | max // "" | tostring),
        (.wall_s | f1), (.steps_s["reference.probe"].s | f1), (.steps_s["reference.gen_inputs"].s | f1),
        (.steps_s["reference.forward"].s | f1) ] | "| " + join(" | ") + " |"' "$out"/*.json |
        sort -t'|' -k2,2V
    exit 0
fi
jq -s --argjson hidden "$hidden" '
  def valid_hidden: [.cases[] | select(.distribution != "nominal" and (.skipped | not)) | .distribution] | unique;
  def level: (.problem.path | capture("level(?<l>[0-9])").l);
  {
    total: length,
    loaded: map(select(.status == "problem_ok")) | length,
    by_level: (group_by(level) | map({level: (.[0] | level), n: length,
        ok: map(select(.status == "problem_ok")) | length,
        all4: map(select(.status == "problem_ok" and (valid_hidden | length) == 4)) | length,
        three_plus: map(select(.status == "problem_ok" and (valid_hidden | length) >= 3)) | length})),
    fallback: [ .[] | select(.status == "problem_ok") | {name: .problem.name,
        domains: [.cases[] | select(.distribution != "nominal" and (.skipped | not) and .domain != "raw") | .distribution + "/" + .domain]}
        | select(.domains | length > 0)],
    skipped: [ .[] | select(.status == "problem_ok") | {name: .problem.name,
        skips: [.cases[] | select(.skipped) | .distribution + ": " + .skip_reason]} | select(.skips | length > 0)],
    failed: [ .[] | select(.status != "problem_ok") | {name: .problem.name, error: (.errors | split("\n") | map(select(length > 0)) | last // "" | .[0:200])}],
    oracle_fallback: [ .[] | select(.oracle != null and .oracle != "float64") | {name: .problem.name, oracle}]
  }' "$out"/*.json
