// Spec field overrides by dotted path (see spec_overrides.hpp), through protobuf reflection.
#include "experiment/validation/spec_overrides.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "experiment/spec/experiment_spec.hpp"

namespace warpsim::experiment::validation {

namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

std::vector<std::string> split(const std::string& path) {
  std::vector<std::string> parts;
  std::istringstream in(path);
  std::string p;
  while (std::getline(in, p, '.')) parts.push_back(p);
  return parts;
}

[[noreturn]] void fail(const Override& o, const std::string& message) {
  throw std::invalid_argument(o.flag + " " + o.path + ": " + message);
}

double to_number(const Override& o) {
  try {
    std::size_t used = 0;
    const double v = std::stod(o.value, &used);
    if (used != o.value.size() || !std::isfinite(v)) throw std::invalid_argument("");
    return v;
  } catch (const std::exception&) {
    fail(o, "'" + o.value + "' is not a number");
  }
}

// Applies to one scalar (index < 0) or one element of a repeated scalar.
void apply_scalar(Message& m, const FieldDescriptor* f, int index, const Override& o) {
  const Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  auto get = [&]() -> double {
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_DOUBLE:
        return rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
      case FieldDescriptor::CPPTYPE_FLOAT:
        return rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f);
      case FieldDescriptor::CPPTYPE_UINT32:
        return rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
      case FieldDescriptor::CPPTYPE_UINT64:
        return static_cast<double>(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
      case FieldDescriptor::CPPTYPE_INT32:
        return rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
      case FieldDescriptor::CPPTYPE_INT64:
        return static_cast<double>(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
      default:
        fail(o, "is not a number field");
    }
  };
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_BOOL || f->cpp_type() == FieldDescriptor::CPPTYPE_STRING ||
      f->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
    if (o.kind == Override::Kind::kScale) fail(o, "only number fields can be scaled");
    if (rep) fail(o, "repeated non-number fields cannot be overridden");
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      r->SetString(&m, f, o.value);
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_BOOL) {
      if (o.value != "true" && o.value != "false") fail(o, "must be true or false");
      r->SetBool(&m, f, o.value == "true");
    } else {
      const auto* v = f->enum_type()->FindValueByName(o.value);
      if (!v) fail(o, "'" + o.value + "' is not a value of " + f->enum_type()->name());
      r->SetEnum(&m, f, v);
    }
    return;
  }
  double v = to_number(o);
  if (o.kind == Override::Kind::kScale) {
    const double old = get();
    if (old == 0) fail(o, "is 0 (its default applies, which --scale cannot see); use --set");
    v *= old;
  }
  const bool integral =
      f->cpp_type() != FieldDescriptor::CPPTYPE_DOUBLE && f->cpp_type() != FieldDescriptor::CPPTYPE_FLOAT;
  if (integral) {
    v = std::round(v);
    const bool unsigned_field =
        f->cpp_type() == FieldDescriptor::CPPTYPE_UINT32 || f->cpp_type() == FieldDescriptor::CPPTYPE_UINT64;
    if (unsigned_field && v < 0) fail(o, "must be >= 0");
  }
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      rep ? r->SetRepeatedDouble(&m, f, index, v) : r->SetDouble(&m, f, v);
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      rep ? r->SetRepeatedFloat(&m, f, index, static_cast<float>(v))
          : r->SetFloat(&m, f, static_cast<float>(v));
      break;
    case FieldDescriptor::CPPTYPE_UINT32: {
      const auto u = static_cast<std::uint32_t>(v);
      rep ? r->SetRepeatedUInt32(&m, f, index, u) : r->SetUInt32(&m, f, u);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      const auto u = static_cast<std::uint64_t>(v);
      rep ? r->SetRepeatedUInt64(&m, f, index, u) : r->SetUInt64(&m, f, u);
      break;
    }
    case FieldDescriptor::CPPTYPE_INT32: {
      const auto u = static_cast<std::int32_t>(v);
      rep ? r->SetRepeatedInt32(&m, f, index, u) : r->SetInt32(&m, f, u);
      break;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      const auto u = static_cast<std::int64_t>(v);
      rep ? r->SetRepeatedInt64(&m, f, index, u) : r->SetInt64(&m, f, u);
      break;
    }
    default:
      fail(o, "is not a number field");
  }
}

void apply(Message& m, const std::vector<std::string>& parts, std::size_t at, const Override& o) {
  const FieldDescriptor* f = m.GetDescriptor()->FindFieldByName(parts[at]);
  if (!f) fail(o, "no field '" + parts[at] + "' in " + m.GetDescriptor()->name());
  const Reflection* r = m.GetReflection();
  const bool last = at + 1 == parts.size();
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    if (last) fail(o, "names a message, not a value");
    if (f->is_repeated()) {
      const int n = r->FieldSize(m, f);
      if (n == 0) fail(o, "'" + parts[at] + "' has no elements");
      for (int i = 0; i < n; ++i) apply(*r->MutableRepeatedMessage(&m, f, i), parts, at + 1, o);
    } else {
      apply(*r->MutableMessage(&m, f), parts, at + 1, o);
    }
    return;
  }
  if (!last) fail(o, "'" + parts[at] + "' is not a message");
  if (f->is_repeated()) {
    const int n = r->FieldSize(m, f);
    if (n == 0) fail(o, "'" + parts[at] + "' has no elements");
    for (int i = 0; i < n; ++i) apply_scalar(m, f, i, o);
  } else {
    apply_scalar(m, f, -1, o);
  }
}

}  // namespace

Override parse_override(const std::string& text, Override::Kind kind) {
  Override o;
  o.kind = kind;
  o.flag = kind == Override::Kind::kSet ? "--set" : "--scale";
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw std::invalid_argument(o.flag + ": '" + text + "' is not PATH=VALUE");
  }
  o.path = text.substr(0, eq);
  o.value = text.substr(eq + 1);
  return o;
}

spec::ExperimentSpec apply_overrides(spec::ExperimentSpec exp, const std::vector<Override>& overrides) {
  if (overrides.empty()) return exp;
  for (const Override& o : overrides) apply(exp, split(o.path), 0, o);
  return spec::validated(std::move(exp));
}

}  // namespace warpsim::experiment::validation
