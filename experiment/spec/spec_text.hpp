// Parsing of a spec file's text into a protobuf message: JSON when the text starts with '{', protobuf text
// format otherwise. Shared by the cluster and experiment specs so they report errors the same way.
#pragma once

#include <google/protobuf/message.h>

#include <string_view>

namespace warpsim::spec {

// Fills `out` from `text`; unknown fields are errors. Throws std::invalid_argument
// "<what> <origin>: <first error, with line:column for text format>".
void parse_text_or_json(std::string_view text, google::protobuf::Message& out, std::string_view what,
                        std::string_view origin);

}  // namespace warpsim::spec
