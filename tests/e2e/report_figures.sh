#!/usr/bin/env bash
# report_figures.sh -- the figures of kbv report --format html (src/charts.c, docs/results.md):
# a small CPU run (two honest candidates of model alpha; two hacks of a model whose name is
# made of HTML and shell commands), with paper-protocol and memory figures and a 48-character
# detector id written into a copy of its database; then every SVG of the page is parsed and its
# text compared with what it must say (and the table's cell holds the model name whole, '|' too): each detector id as one literal text node, each model's
# CDF with its three protocols' legends, the scatter's hacks, no text outside its SVG and no
# two texts on top of each other. The chart step must run nothing: the model name's commands
# leave no canary file, and the report works with a temporary folder whose name holds quotes.
set -u
cd "$(dirname "$0")/../.."
KBV=${KBV:-$PWD/kbv}
. tests/e2e/lib.sh
if ! command -v gnuplot >/dev/null; then
    echo "SKIP: report_figures.sh: kbv report --format html needs gnuplot (Debian: gnuplot-nox; scripts/install-deps.sh installs it)"
    exit 0
fi
new_tmp
E=$PWD/examples
canary=/tmp/kbv-chart-canary
rm -f "$canary"
hostile='b<i>&"q"|`touch /tmp/kbv-chart-canary`a$(touch /tmp/kbv-chart-canary)'\''x'\'' ; touch /tmp/kbv-chart-canary #'
/usr/bin/python3 - "$tmp/m.jsonl" "$E" "$hostile" <<'PY'
import json, sys
out, e, hostile = sys.argv[1:4]
entries = [("problems/relu.py", "candidates/relu/honest_cpu.py", "alpha"),
           ("problems/matmul_fp32.py", "candidates/matmul_fp32/honest_cpu.py", "alpha"),
           ("problems/hardtanh.py", "hacks/identity_output.py", hostile),
           ("problems/mean_all.py", "hacks/constant_output.py", hostile)]
with open(out, "w") as f:
    for p, c, m in entries:
        f.write(json.dumps({"problem": f"{e}/{p}", "candidate": f"{e}/{c}", "model": m}) + "\n")
PY
"$KBV" run --manifest "$tmp/m.jsonl" --db "$tmp/r.db" --device cpu --cases 1 --time-budget 1 --protocol both --quiet 2>"$tmp/run.err"
rc=$?
# The paper protocol's object and the memory figures (GPU only) written into the results: a
# correct and an incorrect paper result for alpha, none for the other model (as a result stored
# before the paper protocol); one peak ratio,
# one pair of peak bytes. And a second detector id as long as an id may be.
longid=a_detector_id_of_the_longest_length_allowed_x48
sqlite3 "$tmp/r.db" "
    UPDATE evaluations SET result = json_set(result, '\$.paper', json('{\"correct\": true, \"speedup\": 1.25}'),
        '\$.memory.peak_bytes_candidate', 3000, '\$.memory.peak_bytes_reference', 2000)
      WHERE json_extract(result, '\$.candidate.path') LIKE '%relu/honest_cpu.py';
    UPDATE evaluations SET result = json_set(result, '\$.paper', json('{\"correct\": false, \"speedup\": null}'), '\$.memory.peak_ratio', 0.5)
      WHERE json_extract(result, '\$.candidate.path') LIKE '%matmul_fp32/honest_cpu.py';
    UPDATE evaluations SET result = json_remove(result, '\$.paper') WHERE model != 'alpha';
    UPDATE evaluations SET hacks = hacks || ',$longid' WHERE hacks LIKE '%identity_output%';" 2>"$tmp/sql.err"
"$KBV" report --db "$tmp/r.db" --format json >"$tmp/r.json" 2>"$tmp/json.err"
# a temporary folder whose name a shell or a gnuplot string would choke on
odd="$tmp/it's \"odd\" \$(touch $canary) \`touch $canary\`"
mkdir -p "$odd"
TMPDIR=$odd "$KBV" report --db "$tmp/r.db" --format html -o "$tmp/r.html" 2>"$tmp/html.err"
hrc=$?
left=$(ls -A "$odd")
if [ "$rc" = 0 ] && [ "$hrc" = 0 ] && [ -z "$left" ] && jq -e '(.chart_rows | length == 4) and
        ([.chart_rows[] | select(.model == "alpha") | .verified > 0 and .standard.correct == true and .paper != null] | all) and
        ([.chart_rows[] | select(.model != "alpha") | .status == "hack" and .paper == null and .verified == null] | all) and
        ([.chart_rows[].peak_ratio | select(. != null)] | sort == [0.5, 1.5])' "$tmp/r.json" >/dev/null; then
    ok "a run of 4 and its report: chart_rows per evaluation (verified, standard, paper, peak ratio)"
else
    not_ok "run and report" "run exit $rc, html exit $hrc, left in TMPDIR: '$left'; $(tail -c 300 "$tmp/run.err") $(cat "$tmp/sql.err" "$tmp/html.err" | head -c 400) $(jq -c .chart_rows "$tmp/r.json" 2>/dev/null | head -c 800)"
fi
# check_svgs HTML JSON MODE: parse every SVG of the page and compare its text with the report
check_svgs() {
    /usr/bin/python3 - "$1" "$2" "$hostile" "$3" <<'PY'
import html, json, re, sys
import xml.etree.ElementTree as ET
page, rep, hostile, mode = open(sys.argv[1], encoding="utf-8").read(), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
bad = []
def label(s, n):  # charts_label: '"' as "'", at most n characters
    s = s.replace('"', "'")
    return s if len(s) <= n else s[:n] + "..."
def texts(svg):
    """Each text element: (text, box x0, y0, x1, y1, has children), from its translate/rotate
    and inherited font-size and anchor; a character taken as 0.6 of the font size wide."""
    vb = [float(v) for v in svg.get("viewBox").split()]
    out = []
    def walk(el, tx, ty, rot, fs, anchor):
        t = el.get("transform") or ""
        m = re.search(r"translate\(([-\d.]+),\s*([-\d.]+)\)", t)
        if m: tx, ty = tx + float(m.group(1)), ty + float(m.group(2))
        r = re.search(r"rotate\(([-\d.]+)\)", t)
        if r: rot = float(r.group(1))
        fs = float(el.get("font-size", fs)); anchor = el.get("text-anchor", anchor)
        if el.tag.endswith("}text"):
            s = "".join(el.itertext())
            w = 0.6 * fs * len(s)
            a = {"start": 0, "middle": 0.5, "end": 1}[anchor]
            if abs(rot) < 1: box = (tx - a * w, ty - 0.8 * fs, tx + (1 - a) * w, ty + 0.25 * fs)
            else: box = (tx - 0.8 * fs, ty - (1 - a) * w, tx + 0.25 * fs, ty + a * w)
            out.append((s, box, len(el) > 0))
        for c in el: walk(c, tx, ty, rot, fs, anchor)
    walk(svg, 0, 0, 0, 11, "start")
    return vb, out
svgs = re.findall(r"<svg\b.*?</svg>", page, re.S)
figs = {}
for s in svgs:
    try: root = ET.fromstring(s)
    except ET.ParseError as e: bad.append(f"an SVG does not parse: {e}"); continue
    vb, ts = texts(root)
    strs = [t[0] for t in ts]
    for s2, (x0, y0, x1, y1), kids in ts:
        if kids: bad.append(f"text {s2!r} has markup inside (enhanced text?)")
        if s2.strip() and (x0 < 0 or y0 < 0 or x1 > vb[2] or y1 > vb[3]): bad.append(f"text {s2!r} ({x0:.0f},{y0:.0f})-({x1:.0f},{y1:.0f}) outside the {vb[2]:.0f}x{vb[3]:.0f} SVG")
    for i in range(len(ts)):
        for j in range(i + 1, len(ts)):
            a, b = ts[i][1], ts[j][1]
            # side by side (by more than a pixel) and less than 2 pixels apart vertically
            if ts[i][0].strip() and ts[j][0].strip() and a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] + 2 and b[1] < a[3] + 2:
                bad.append(f"texts {ts[i][0]!r} and {ts[j][0]!r} overlap or touch")
    title = next((t for t in strs if t.startswith(("Speedup CDF: ", "Speedup per evaluation", "Peak memory", "Hack verdicts"))), None)
    figs.setdefault(title.split(":")[0] if title and title.startswith("Speedup CDF") else title, []).append(strs)
models = sorted({r["model"] for r in rep["chart_rows"]})
ids = sorted(rep["overall"]["hacks_by_detector"])
if "<i>" in page or "<?xml" in page: bad.append("the model name's HTML, or an SVG's XML prolog, is in the page as it is")
caps = [html.unescape(c) for c in re.findall(r"<figcaption>(.*?)</figcaption>", page, re.S)]
if hostile not in [html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", page)]: bad.append("no table cell holds the model name whole")
if mode == "timed":
    if len(svgs) != len(models) + 3: bad.append(f"{len(svgs)} SVGs, want {len(models) + 3} (a CDF per model, scatter, memory, hacks)")
    cdfs = figs.get("Speedup CDF", [])
    for m in models:
        want = label(f"Speedup CDF: {m}", 80)
        got = [s for s in cdfs if want in s]
        if len(got) != 1: bad.append(f"no CDF titled {want!r} as one text node"); continue
        keys = [t for t in got[0] if t.startswith(("verified (kbv): ", "paper: ", "standard (KernelBench): "))]
        if len(keys) != 3: bad.append(f"CDF of {m!r}: legends {keys}, want the three protocols")
        if not any(f"Model {m}" == c for c in caps): bad.append(f"no figure caption naming model {m!r} exactly")
    alpha = next((s for s in cdfs if "Speedup CDF: alpha" in s), [])
    if "verified (kbv): 2 timed" not in alpha or "paper: 1 timed, 1 failed (at the left edge)" not in alpha: bad.append(f"alpha's legends: {alpha}")
    other = next((s for s in cdfs if "Speedup CDF: alpha" not in s), [])
    if "paper: not run" not in other or "verified (kbv): 0 timed, 2 failed (at the left edge)" not in other: bad.append(f"the hacks' model legends: {other}")
    sc = figs.get("Speedup per evaluation: standard (KernelBench) against verified (kbv)", [[]])[0]
    if "none" not in sc or "verified: 2" not in sc or not any(t.startswith("hack: ") for t in sc): bad.append(f"scatter texts: {sc}")
    mem = figs.get("Peak memory (candidate / reference) against verified speedup", [[]])[0]
    if "verified: 2" not in mem: bad.append(f"memory texts: {mem}")
else:
    if len(svgs) != 1 or "no evaluation was timed" not in page: bad.append(f"{len(svgs)} SVGs without timings, or no note saying so")
hk = figs.get("Hack verdicts by detector", [[]])[0]
for i in ids:
    if hk.count(i) != 1: bad.append(f"detector id {i!r} is not one text node of the hacks chart: {hk}")
if len(ids) < 2: bad.append(f"hacks_by_detector {ids}: want 2 ids or more")
print("; ".join(bad[:12]) if bad else "ok")
sys.exit(1 if bad else 0)
PY
}
if out=$(check_svgs "$tmp/r.html" "$tmp/r.json" timed 2>&1); then
    ok "the HTML report's figures: a CDF per model with its three protocols, the scatter, memory and hacks; every id literal, no text cut off or overlapping"
else not_ok "figures" "$out"; fi
# Without speedups (as after --no-timing): the CDFs and scatter say so, the hacks chart stays.
sqlite3 "$tmp/r.db" ".backup '$tmp/nt.db'" 2>/dev/null
sqlite3 "$tmp/nt.db" "UPDATE evaluations SET result = json_remove(result, '\$.speedup', '\$.standard.speedup', '\$.paper.speedup')" 2>"$tmp/sql.err"
"$KBV" report --db "$tmp/nt.db" --format json >"$tmp/nt.json" 2>/dev/null
if "$KBV" report --db "$tmp/nt.db" --format html -o "$tmp/nt.html" 2>"$tmp/nt.err" && out=$(check_svgs "$tmp/nt.html" "$tmp/nt.json" untimed 2>&1); then
    ok "without timings the speedup figures say there is no data; the hacks chart is drawn"
else not_ok "figures without timings" "$(cat "$tmp/sql.err" "$tmp/nt.err" | head -c 300) ${out:-}"; fi
if [ -e "$canary" ]; then
    not_ok "the chart step ran a command" "$canary exists"
    rm -f "$canary"
else ok "the chart step ran nothing (the model name's commands left no canary)"; fi
finish
