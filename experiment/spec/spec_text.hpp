// Reading a spec file and parsing its text into a protobuf message. One rule for every loader (experiment,
// job, cluster, cost, sweep specs): an optional UTF-8 byte-order mark is dropped, then the text is JSON when
// its first non-blank byte is '{' and protobuf text format otherwise. The file name's extension plays no
// part.
#pragma once

#include <google/protobuf/message.h>

#include <optional>
#include <string>
#include <string_view>

namespace warpsim::spec {

// `text` without a leading UTF-8 byte-order mark (EF BB BF).
std::string_view strip_bom(std::string_view text);
// The detection rule above: true when the text (after a BOM and blanks) starts with '{'.
bool looks_like_json(std::string_view text);

// The bytes of the file at `path`. A directory, a missing or unreadable file throws std::invalid_argument
// "<what> '<path>': <reason>" (what = "experiment spec", "job spec", ...).
std::string read_spec_file(const std::string& path, std::string_view what);

// The first error protobuf's text-format parser reports, with its 0-based position (protobuf's own
// numbering).
struct TextFormatError {
  int line = 0;
  int column = 0;
  std::string message;
  // "line:column" counted from 1, as editors show it.
  std::string position() const { return std::to_string(line + 1) + ":" + std::to_string(column + 1); }
};
// Parses `text` (text format only, no BOM handling) into `out`; the first error, or nullopt when it parsed.
// The one place that collects protobuf's parse errors, which TextFormat would otherwise only log to stderr.
std::optional<TextFormatError> parse_text_format(std::string_view text, google::protobuf::Message& out);

// Fills `out` from `text` by the rule above; unknown fields are errors. Throws std::invalid_argument
// "<what> <origin>: <first error, with line:column for text format>".
void parse_text_or_json(std::string_view text, google::protobuf::Message& out, std::string_view what,
                        std::string_view origin);

}  // namespace warpsim::spec
