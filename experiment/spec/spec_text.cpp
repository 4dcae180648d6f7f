// Spec text parsing (see spec_text.hpp).
#include "experiment/spec/spec_text.hpp"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <stdexcept>
#include <string>

namespace warpsim::spec {

namespace {

// Keeps the first parse error with its position; TextFormat would otherwise only log to stderr.
class FirstError final : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (text.empty())
      text = "line " + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
  }
  std::string text;
};

}  // namespace

void parse_text_or_json(std::string_view text, google::protobuf::Message& out, std::string_view what,
                        std::string_view origin) {
  const std::string prefix = std::string(what) + " " + std::string(origin) + ": ";
  const auto first = text.find_first_not_of(" \t\r\n");
  const std::string input(text);
  if (first != std::string_view::npos && text[first] == '{') {
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    const auto status = google::protobuf::util::JsonStringToMessage(input, &out, options);
    const std::string message(status.message());  // its first line: the input and a caret follow
    if (!status.ok()) throw std::invalid_argument(prefix + message.substr(0, message.find('\n')));
    return;
  }
  google::protobuf::TextFormat::Parser parser;
  FirstError errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(input, &out)) throw std::invalid_argument(prefix + errors.text);
}

}  // namespace warpsim::spec
