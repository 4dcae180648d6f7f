# With the optimism throttle on (the default), memory does not grow with simulated time: a run 20x longer
# has a peak RSS per rank within a fixed slack of the short run's, and the uncommitted-event peak stays within the throttle.
source "$(dirname "$0")/lib.sh"

short=$(run_np 2 phold --lps-per-rank 4096 --end-time 1000)
long=$(run_np 2 phold --lps-per-rank 4096 --end-time 20000)
rss_short=$(value "peak rss bytes" "$short")
rss_long=$(value "peak rss bytes" "$long")
events_short=$(value "events committed" "$short")
events_long=$(value "events committed" "$long")
peak_uncommitted=$(value "peak uncommitted events" "$long")
echo "short: $events_short events, peak rss $rss_short bytes/rank"
echo "long:  $events_long events, peak rss $rss_long bytes/rank, peak uncommitted $peak_uncommitted"
((events_long > 15 * events_short)) || fail "the long run is not much longer"
# 16 x default gvt interval (4096) plus the events at GVT that always run.
((peak_uncommitted <= 16 * 4096 + 8192)) || fail "uncommitted events exceeded the throttle: $peak_uncommitted"
# Without fossil collection the long run would hold ~80M events x 40 bytes = 3.2 GB. Allow 64 MiB of slack
# for scheduling noise (a descheduled rank lets its peer run ahead up to the throttle).
((rss_long <= rss_short + 64 * 1024 * 1024)) || fail "peak RSS grew from $rss_short to $rss_long with simulated time"

# A tight explicit throttle holds too.
tight=$(run_np 2 phold --lps-per-rank 4096 --end-time 2000 --max-uncommitted 1000 --gvt-interval 100)
tight_peak=$(value "peak uncommitted events" "$tight")
echo "tight throttle: peak uncommitted $tight_peak"
((tight_peak <= 1000 + 4096)) || fail "tight throttle exceeded: $tight_peak"
