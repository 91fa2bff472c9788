#!/usr/bin/env bash
# check-layers.sh — the layering of common/ (docs/architecture.md), checked on the
# sources as well as by the build: no file includes a header of a layer above its own,
# the loop includes nothing of HTTP, libcurl, libxml2 or hiredis, the redis layer (beside
# web: it links the loop only) and web know nothing of each other, and nothing in common/
# includes a stage's header. Prints each violation; exit 1 if any.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
layers=(base loop redis web core app)
declare -A rank
for i in "${!layers[@]}"; do
    for h in common/"${layers[$i]}"/*.h common/"${layers[$i]}"/private/*.h; do
        [ -e "$h" ] && rank[$(basename "$h")]=$i
    done
done
stage_headers=$(ls stage1_callbacks/*.h stage2_generators/*.h stage3_queue/*.h stage3_queue/*/*.h 2>/dev/null |
                xargs -n1 basename | sort -u)
bad=0
for i in "${!layers[@]}"; do
    for f in common/"${layers[$i]}"/*.[ch] common/"${layers[$i]}"/private/*.h; do
        [ -e "$f" ] || continue
        while IFS= read -r inc; do
            r=${rank[$inc]:-}
            if [ -n "$r" ] && [ "$r" -gt "$i" ]; then
                echo "$f: includes $inc of common/${layers[$r]} (above ${layers[$i]})"; bad=$((bad + 1))
            fi
            if grep -qx "$inc" <<<"$stage_headers" && [ -z "$r" ]; then
                echo "$f: includes the stage header $inc"; bad=$((bad + 1))
            fi
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
    done
done
if grep -nE '#[[:space:]]*include[[:space:]]*[<"](curl/|libxml/|http|hiredis/|redis)' common/loop/*.[ch] common/loop/private/*.h; then
    echo "common/loop: includes HTTP, libcurl, libxml2 or hiredis (above)"; bad=$((bad + 1))
fi
if grep -nE '#[[:space:]]*include[[:space:]]*[<"](hiredis/|redis)' common/web/*.[ch]; then
    echo "common/web: includes hiredis or the redis layer (above), which sits beside it"; bad=$((bad + 1))
fi
echo "check-layers: ${#rank[@]} headers in ${#layers[@]} layers, $bad violation(s)"
[ "$bad" -eq 0 ]
