#!/usr/bin/env bash
# Bad reliability.simulate_failures fields exit 2 with one error line naming the field.
set -euo pipefail
WARPSIM=$1
SPEC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../../jobs/cli/expect_spec_error.sh"
expect hours "reliability.simulate_failures.hours" 's/hours: 24 /hours: 0 /'
expect hours_big "reliability.simulate_failures.hours" 's/hours: 24 /hours: 6000 /'
expect no_hours "reliability.simulate_failures.hours" 's/hours: 24 //'
expect probability "reliability.simulate_failures.correlated.probability" 's/probability: 0.3/probability: 1/'
expect negative "reliability.simulate_failures.correlated.probability" 's/probability: 0.3/probability: -0.1/'
expect window "reliability.simulate_failures.correlated.within_hours" 's/within_hours: 1/within_hours: 0/'
expect no_failures "reliability.simulate_failures" '/failures { component/d'
expect unknown "no_such_field" 's/hours: 24 /hours: 24 no_such_field: 1 /'
expect repair "reliability.simulate_failures.repair_hours" 's/repair_hours: 3/repair_hours: -1/'
