#!/usr/bin/env python3
"""results_json.py FILE... -- each FILE is a results.json in the shape Gradescope's
autograder documents (https://gradescope-autograders.readthedocs.io/en/latest/specs/):
{"score", "execution_time", "output", "visibility", "stdout_visibility",
 "tests": [{"name", "score", "max_score", "status", "output", "visibility"}]}.
Checks the types, the allowed values, each test's score within its max_score, and the
overall score the sum of the tests'; and that hidden points stay hidden: with a test
not visible at once (hidden, after_due_date, after_published), the top level (the
total score, those points included) is not visible at once either, and no later than
the latest such test. Prints one line per file; exit 1 on any problem."""
import json
import sys

VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}
# When each is shown: at once, after the due date, once published, never (Gradescope
# publishes grades after the due date).
WHEN = {"visible": 0, "after_due_date": 1, "after_published": 2, "hidden": 3}
STATUS = {"passed", "failed"}


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def problems(path):
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        return [f"not JSON: {e}"]
    out = []
    if not isinstance(d, dict):
        return ["not an object"]
    known = {"score", "execution_time", "output", "output_format", "visibility",
             "stdout_visibility", "extra_data", "tests", "leaderboard"}
    out += [f"unknown key {k!r}" for k in d if k not in known]
    if "score" in d and not number(d["score"]):
        out.append("score is not a number")
    if "execution_time" in d and not number(d["execution_time"]):
        out.append("execution_time is not a number")
    for k in ("output",):
        if k in d and not isinstance(d[k], str):
            out.append(f"{k} is not a string")
    for k in ("visibility", "stdout_visibility"):
        if k in d and d[k] not in VISIBILITY:
            out.append(f"{k} {d[k]!r} is not one of {sorted(VISIBILITY)}")
    tests = d.get("tests")
    if not isinstance(tests, list) or not tests:
        return out + ["no tests list"]
    total = 0
    for i, t in enumerate(tests):
        where = f"tests[{i}]"
        if not isinstance(t, dict):
            out.append(f"{where} is not an object")
            continue
        tknown = {"score", "max_score", "status", "name", "name_format", "number", "output",
                  "output_format", "tags", "visibility", "extra_data"}
        out += [f"{where}: unknown key {k!r}" for k in t if k not in tknown]
        if not isinstance(t.get("name"), str) or not t["name"]:
            out.append(f"{where}: no name")
        if not number(t.get("score")) or not number(t.get("max_score")):
            out.append(f"{where}: score and max_score must be numbers")
        elif not 0 <= t["score"] <= t["max_score"]:
            out.append(f"{where}: score {t['score']} outside 0..{t['max_score']}")
        else:
            total += t["score"]
        if "status" in t and t["status"] not in STATUS:
            out.append(f"{where}: status {t['status']!r}")
        if "output" in t and not isinstance(t["output"], str):
            out.append(f"{where}: output is not a string")
        if t.get("visibility", "visible") not in VISIBILITY:
            out.append(f"{where}: visibility {t.get('visibility')!r}")
        if t.get("status") == "failed" and not t.get("output"):
            out.append(f"{where}: failed with no output to say why")
        # A case run several times (grade.conf's `repeat`): extra_data.runs holds each
        # run's outcome; one that passed some and failed others is flaky, scored as
        # failed, and its output says so.
        runs = t.get("extra_data", {}).get("runs") if isinstance(t.get("extra_data"), dict) else None
        if runs is not None:
            if not isinstance(runs, list) or len(runs) < 2 or any(r not in STATUS for r in runs):
                out.append(f"{where}: extra_data.runs {runs!r} is not a list of 2 or more outcomes")
            elif len(set(runs)) > 1:
                if t.get("status") != "failed" or t.get("score") != 0:
                    out.append(f"{where}: flaky ({runs}) but not scored as failed")
                if "flaky" not in str(t.get("output", "")):
                    out.append(f"{where}: flaky ({runs}) and its output does not say so")
            elif t.get("status") != runs[0]:
                out.append(f"{where}: every run {runs[0]}, its status {t.get('status')!r}")
    if number(d.get("score")) and abs(d["score"] - total) > 1e-9:
        out.append(f"score {d['score']} is not the sum of the tests' ({total})")
    later = [t.get("visibility", d.get("visibility", "visible")) for t in tests
             if isinstance(t, dict) and number(t.get("max_score")) and t["max_score"] > 0]
    later = [v for v in later if v in WHEN and WHEN[v] > 0]
    top = d.get("visibility", "visible")
    if later and top in WHEN and WHEN[top] < max(WHEN[v] for v in later):
        out.append(f"visibility {top!r}: the total score holds the points of tests shown "
                   f"{max(later, key=WHEN.get)!r}, and would show them before")
    return out


def main():
    if len(sys.argv) < 2:
        print("usage: results_json.py FILE...", file=sys.stderr)
        return 2
    bad = 0
    for path in sys.argv[1:]:
        p = problems(path)
        print(f"{'ok  ' if not p else 'FAIL'}  {path}" + "".join(f"\n        {x}" for x in p))
        bad += bool(p)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
