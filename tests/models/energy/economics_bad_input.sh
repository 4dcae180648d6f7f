#!/usr/bin/env bash
# Bad cost and reliability sections exit 2 with one error line naming the offending field.
set -euo pipefail
WARPSIM=$1
SPEC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../../jobs/cli/expect_spec_error.sh"
expect pue "cost.pue" 's/pue: 1.2/pue: 0.9/'
expect no_pue "cost.pue" '/pue: 1.2/d'
expect no_price "cost.electricity_usd_per_kwh" '/electricity_usd_per_kwh/d'
expect years "cost.amortization_years" 's/amortization_years: 4/amortization_years: 0/'
expect capex "cost.gpu_capex_usd" 's/gpu_capex_usd: 25000/gpu_capex_usd: -1/'
expect idle "cost.power.gpu_idle_w" 's/training_tokens: 1e9/training_tokens: 1e9 power { gpu_idle_w: 800 gpu_busy_w: 700 }/'
expect tokens "cost.training_tokens" 's/training_tokens: 1e9/training_tokens: 0.5/'
expect component "reliability.failures\[1\].component" 's/component: "node"/component: "fan"/'
expect mtbf "reliability.failures\[0\].mtbf_hours" 's/mtbf_hours: 50000/mtbf_hours: 0/'
expect restart "reliability.restart_seconds" '/restart_seconds/d'
expect fraction "reliability.stragglers.gpu_fraction" 's/gpu_fraction: 0.125/gpu_fraction: 1.5/'
expect slowdown "reliability.stragglers.slowdown" 's/slowdown: 1.5/slowdown: 0.5/'
expect trials "reliability.monte_carlo_trials" 's/monte_carlo_trials: 50/monte_carlo_trials: 1000000/'
expect no_interval "reliability.checkpoint_interval_steps" 's/checkpoint_interval_steps: 100/checkpoint_interval_steps: 0/; s/checkpoint_interval_steps: 2/checkpoint_interval_steps: 0/'
expect no_checkpoint "reliability.checkpoint_seconds" 's/checkpoint_interval_steps: 2/checkpoint_interval_steps: 0/'
expect unknown "no_such_cost" 's/pue: 1.2/pue: 1.2 no_such_cost: 1/'
