// The optimistic kernel's log of processed events, in processing order, for fossil collection: every GVT
// round commits the events below GVT in log order (so each LP's events commit oldest first) and keeps the
// rest. The log holds up to max_uncommitted events and a round comes every gvt_interval events, so a flat
// log passed over its whole kept part again in every round (a dozen times per event, the largest engine
// cost in a 2-rank profile). Here it is cut into segments of kSegment entries that know their smallest
// time: a round visits only the segments holding something below GVT, and commits exactly the same events
// in exactly the same order as a pass over the whole log would.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "engine/sim_time.hpp"

namespace warpsim {

class ProcessedLog {
 public:
  struct Entry {
    std::uint32_t index;  // pool slot
    std::uint32_t stamp;  // the slot's processing stamp then: a different one means rolled back since
    SimTime time;         // kept here so that kept entries are passed over without touching the pool
  };
  static constexpr std::size_t kSegment = 1024;

  void push(const Entry& entry) {
    if (segments_.empty() || segments_.back().entries.size() == kSegment) add_segment();
    Segment& s = segments_.back();
    s.entries.push_back(entry);
    s.min_time = std::min(s.min_time, entry.time);
    ++size_;
  }

  // Visits every entry whose time is below `bound`, in log order, and drops it; keeps the others in
  // order. Before visiting an entry it calls far(e) for the entry kAhead later and near(e) for the one
  // kAhead / 2 later (when those are below the bound too), so that the caller can prefetch in two stages.
  static constexpr std::size_t kAhead = 16;
  template <class Far, class Near, class Visit>
  void collect(SimTime bound, Far&& far, Near&& near, Visit&& visit) {
    bool emptied = false;
    for (Segment& s : segments_) {
      if (s.min_time >= bound) continue;
      std::vector<Entry>& v = s.entries;
      const std::size_t n = v.size();
      std::size_t kept = 0;
      SimTime min_kept = kTimeInfinity;
      for (std::size_t i = 0; i < n; ++i) {
        if (i + kAhead < n && v[i + kAhead].time < bound) far(v[i + kAhead]);
        if (i + kAhead / 2 < n && v[i + kAhead / 2].time < bound) near(v[i + kAhead / 2]);
        const Entry e = v[i];
        if (e.time >= bound) {
          v[kept++] = e;
          min_kept = std::min(min_kept, e.time);
          continue;
        }
        visit(e);
      }
      size_ -= n - kept;
      v.resize(kept);
      s.min_time = min_kept;
      emptied = emptied || kept == 0;
    }
    if (emptied) drop_empty_segments();
  }

  std::size_t size() const { return size_; }
  std::size_t capacity_bytes() const {
    std::size_t bytes = 0;
    for (const Segment& s : segments_) bytes += s.entries.capacity() * sizeof(Entry);
    for (const std::vector<Entry>& v : spare_) bytes += v.capacity() * sizeof(Entry);
    return bytes;
  }

 private:
  struct Segment {
    std::vector<Entry> entries;
    SimTime min_time = kTimeInfinity;
  };

  void add_segment() {
    Segment s;
    if (!spare_.empty()) {
      s.entries = std::move(spare_.back());
      spare_.pop_back();
    } else {
      s.entries.reserve(kSegment);
    }
    segments_.push_back(std::move(s));
  }
  // Emptied segments go back to the spares (their buffers are reused: no allocation per segment).
  void drop_empty_segments() {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < segments_.size(); ++i) {
      if (segments_[i].entries.empty()) {
        spare_.push_back(std::move(segments_[i].entries));
        spare_.back().clear();
      } else {
        if (kept != i) segments_[kept] = std::move(segments_[i]);
        ++kept;
      }
    }
    segments_.resize(kept);
  }

  std::deque<Segment> segments_;
  std::vector<std::vector<Entry>> spare_;
  std::size_t size_ = 0;
};

}  // namespace warpsim
