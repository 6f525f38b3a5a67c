#!/bin/sh
# Writes the measured candidates of a finished `perfora tune` run as the fixture that
# tests/search/test_model_heldout.c reads: one valid training candidate a line (generation,
# relative time, Lab error, schedule lines joined by |), in the order of evaluations.jsonl.
# Usage: tests/search/measured.sh RUN APP > tests/search/measured_APP.tsv   (needs jq)
set -eu
run=$1 app=$2
jq -r --arg app "$app" '"# \($app): the valid training candidates of a perfora tune run of apps/\($app).pf: population \(.ga.population) x \(.ga.generations) generations, seed \(.ga.seed), \(.evaluation.width)x\(.evaluation.height), timed with \(.evaluation.threads) threads (0: all cores); made by tests/search/measured.sh"' "$run/config.json"
printf '# generation\ttime\terror\tschedule (its lines joined by |)\n'
jq -r 'select(.set == "train" and .valid and .generation >= 0)
       | [.generation, .time, .error,
          (.schedule | sub("^# perfora schedule 1\n"; "") | rtrimstr("\n") | gsub("\n"; "|"))]
       | @tsv' "$run/evaluations.jsonl"
