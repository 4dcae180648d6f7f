// Spec text parsing (see spec_text.hpp).
#include "experiment/spec/spec_text.hpp"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace warpsim::spec {

namespace {

// Keeps the first parse error with its position.
class FirstError final : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (!error) error = TextFormatError{line, column, message};
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  std::optional<TextFormatError> error;
};

}  // namespace

std::optional<TextFormatError> parse_text_format(std::string_view text, google::protobuf::Message& out) {
  google::protobuf::TextFormat::Parser parser;
  FirstError errors;
  parser.RecordErrorsTo(&errors);
  if (parser.ParseFromString(std::string(text), &out)) return std::nullopt;
  return errors.error ? errors.error : TextFormatError{0, 0, "parse error"};
}

std::string_view strip_bom(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  return text;
}

bool looks_like_json(std::string_view text) {
  text = strip_bom(text);
  const auto first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

std::string read_spec_file(const std::string& path, std::string_view what) {
  const std::string prefix = std::string(what) + " '" + path + "': ";
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw std::invalid_argument(prefix + "is a directory, not a file");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw std::invalid_argument(prefix + "cannot read (" + (err != 0 ? std::strerror(err) : "open failed") +
                                ")");
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw std::invalid_argument(prefix + "read error");
  return buffer.str();
}

void parse_text_or_json(std::string_view text, google::protobuf::Message& out, std::string_view what,
                        std::string_view origin) {
  const std::string prefix = std::string(what) + " " + std::string(origin) + ": ";
  const std::string input(strip_bom(text));
  if (looks_like_json(input)) {
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    const auto status = google::protobuf::util::JsonStringToMessage(input, &out, options);
    const std::string message(status.message());  // its first line: the input and a caret follow
    if (!status.ok()) throw std::invalid_argument(prefix + message.substr(0, message.find('\n')));
    return;
  }
  if (const auto error = parse_text_format(input, out))
    throw std::invalid_argument(prefix + "line " + error->position() + ": " + error->message);
}

}  // namespace warpsim::spec
