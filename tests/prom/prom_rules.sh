#!/bin/sh
# prom_rules: the example rules parse, and their unit test (recorded series in,
# alerts out) passes: the busbw drop alert fires at 85% and not at 95%.
set -eu
command -v promtool >/dev/null || { echo "SKIP: promtool not installed (apt install prometheus)"; exit 77; }
cd "$1"
promtool check rules dlcomm-rules.yml
promtool test rules dlcomm-rules.test.yml
