// What `warpsim client submit-*` sends: the service reads no file a client names (docs/service.md), so the
// client makes a spec file self-contained first, reading every file it refers to and inlining it.
#pragma once

#include <string>

namespace warpsim::serve {

// The text of the experiment file at `path` with `cluster_file` and `job_file` (relative to that file)
// read and inlined. A file that refers to none is sent as written (so the service's errors name the
// user's own lines); otherwise the result is the resolved spec in protobuf text format. Throws
// std::invalid_argument naming the field and the file for a file that cannot be read or parsed.
std::string self_contained_experiment_text(const std::string& path);

// The same for a sweep file: `base_file` (relative to the sweep file) becomes an inline `base`, and the
// base's `cluster_file`/`job_file` (relative to the file that names them) are inlined too.
std::string self_contained_sweep_text(const std::string& path);

}  // namespace warpsim::serve
