#!/usr/bin/env bash
# wall-digest.sh -- one line per result JSON (a kbv eval --json file, or a folder of them): the
# verdict, the event speedup, kbv's own clock (timing.wall: speedup, predicted, consistency,
# its cost) and the audit's authored share. For checking the batched wall-time check and the
# authored-share threshold against honest and hack candidates (docs/timing.md, hacks.md).
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
       ([.flags[]? | select(.severity != "info") | .id] | join(","))] | @tsv' "$f" 2>/dev/null
done | { if command -v column >/dev/null; then column -t -s $'\t' -N file,status,speedup,wall_sp,predicted,consist,wall_cost_s,eval_s,authored,flags; else cat; fi; }
