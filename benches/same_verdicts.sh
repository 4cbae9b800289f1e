#!/bin/sh
# Issue 38: `eboard replay --json` (and the PGN) of the bench's script and
# of other simulated scripts, byte for byte, between two builds.
#
#   benches/same_verdicts.sh /tmp/eboard-main target/release/eboard
#
# Exits non-zero if any output differs. Needs ../shared/corpus.
set -eu
before=$1
after=$2
corpus=${CORPUS:-$(dirname "$0")/../../shared/corpus/lichess-sample.pgn}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$before" simulate "$corpus" --seed 7 >"$dir/human-7.board"      # the bench's script
"$before" simulate "$corpus" --seed 1 >"$dir/human-1.board"
"$before" simulate "$corpus" --hostile --occupancy --clock --seed 3 >"$dir/hostile-3.board"
"$before" simulate "$corpus" --physics --seed 5 >"$dir/physics-5.board" 2>/dev/null
"$before" simulate "$corpus" --noise rough --clock --seed 11 >"$dir/rough-11.board"
status=0
for script in "$dir"/*.board; do
    name=$(basename "$script" .board)
    for format in --json ""; do
        "$before" replay $format "$script" >"$dir/$name.before" 2>&1 || true
        "$after" replay $format "$script" >"$dir/$name.after" 2>&1 || true
        if cmp -s "$dir/$name.before" "$dir/$name.after"; then
            echo "same: $name ${format:-pgn} ($(grep -c dead_position "$dir/$name.after" || true) dead_position)"
        else
            echo "DIFFERENT: $name ${format:-pgn}"
            cmp "$dir/$name.before" "$dir/$name.after" | head -1
            status=1
        fi
    done
done
# The pinned scripts of tests/scripts: each shows one rule (dead positions
# the quick test proves with the solver or only the full analysis does,
# flag falls and resignations against mating material, ...), the verdict
# paths the corpus scripts may not reach.
pinned=0
for script in "$(dirname "$0")"/../tests/scripts/*.board; do
    for format in --json ""; do
        "$before" replay $format "$script" >"$dir/pinned.before" 2>&1 || true
        "$after" replay $format "$script" >"$dir/pinned.after" 2>&1 || true
        if ! cmp -s "$dir/pinned.before" "$dir/pinned.after"; then
            echo "DIFFERENT: $(basename "$script") ${format:-pgn}"
            status=1
        fi
    done
    pinned=$((pinned + 1))
done
echo "compared: $pinned scripts of tests/scripts, --json and pgn"
exit $status
