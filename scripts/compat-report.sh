#!/usr/bin/env bash
# compat-report.sh OUT_DIR -- the Markdown summary of a scripts/compat.sh run (needs jq).
set -u
out=${1:?usage: compat-report.sh OUT_DIR}
hidden='["normal","uniform_shifted","mixed_magnitude","heavy_tailed"]'
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
