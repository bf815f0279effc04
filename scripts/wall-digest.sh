#!/usr/bin/env bash
# wall-digest.sh -- one line per result JSON (a kbv eval --json file, or a folder of them): the
# verdict, the event speedup, kbv's own clock (timing.wall: speedup, predicted, consistency,
# its cost), the audit's authored share, and what the unpredictable checks of #21 cost: the
# hidden checks (timing.hidden_checks.time_s), the partial-rewrite probe and the weight cases,
# in seconds and as a share of the evaluation's wall time. For checking the batched wall-time
# check, the authored-share threshold and that cost (docs/timing.md, hacks.md, BENCHMARKS.md).
# Usage: scripts/wall-digest.sh FILE.json|DIR...
for arg in "$@"; do
    if [ -d "$arg" ]; then find "$arg" -name '*.json' | sort; else echo "$arg"; fi
done | while read -r f; do
    jq -r --arg f "$(basename "$f")" '
      def r(x): if x == null then "-" else (x * 1000 | round / 1000 | tostring) end;
      (.audit.candidate // {}) as $a |
      [$f, .status,
       r(.speedup.value), r(.timing.wall.speedup), r(.timing.wall.predicted), r(.timing.wall.consistency),
       r(.timing.wall.time_s), r(.wall_s),
       (if ($a.authored_ns // 0) + ($a.library_ns // 0) > 0 then r($a.authored_ns / ($a.authored_ns + $a.library_ns)) else "-" end),
       (((.timing.hidden_checks.time_s // 0) + (.timing.partial_probe_s // 0) + (.weights.time_s // 0)) as $c |
        r($c), (if (.wall_s // 0) > 0 then r($c / .wall_s) else "-" end)),
       ([.flags[]? | select(.severity != "info") | .id] | join(","))] | @tsv' "$f" 2>/dev/null
done | { if command -v column >/dev/null; then column -t -s $'\t' -N file,status,speedup,wall_sp,predicted,consist,wall_cost_s,eval_s,authored,checks_s,checks_share,flags; else cat; fi; }
