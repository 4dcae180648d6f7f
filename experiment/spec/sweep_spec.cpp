// SweepSpec loading and expansion (see sweep_spec.hpp).
#include "experiment/spec/sweep_spec.hpp"
#include "experiment/spec/cluster_jobs_spec.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include "engine/hash.hpp"
#include "experiment/spec/cluster_spec.hpp"
#include "experiment/spec/experiment_spec.hpp"
#include "experiment/spec/job_spec.hpp"
#include "experiment/spec/spec_text.hpp"

namespace warpsim::spec {

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("sweep spec: " + what);
}

std::string read_file(const std::string& path) {
  try {
    return read_spec_file(path, "file");
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
}

std::string resolve(const std::filesystem::path& base, const std::string& file) {
  const std::filesystem::path p(file);
  return p.is_absolute() ? file : (base / p).string();
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

bool is_index(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

std::string field_names(const Descriptor* d) {
  std::string names;
  for (int i = 0; i < d->field_count(); ++i) names += (i ? ", " : "") + d->field(i)->name();
  return names;
}

template <typename Int>
Int parse_int(const std::string& path, const std::string& text, const char* type) {
  Int v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range)
    throw std::invalid_argument(path + ": value '" + text + "' is out of range for " + type);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw std::invalid_argument(path + ": value '" + text + "' is not " + type);
  return v;
}

double parse_double(const std::string& path, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v))
    throw std::invalid_argument(path + ": value '" + text + "' is not a finite number");
  return v;
}

std::string print_double(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

// Sets a scalar field (element `index` of a repeated one, or the singular field when index < 0) from text;
// returns the canonical text of the value.
std::string set_scalar(Message& msg, const FieldDescriptor* f, int index, const std::string& path,
                       const std::string& text) {
  const Reflection* r = msg.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      const auto v = parse_int<std::int32_t>(path, text, "a 32-bit integer");
      rep ? r->SetRepeatedInt32(&msg, f, index, v) : r->SetInt32(&msg, f, v);
      return std::to_string(v);
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      const auto v = parse_int<std::int64_t>(path, text, "a 64-bit integer");
      rep ? r->SetRepeatedInt64(&msg, f, index, v) : r->SetInt64(&msg, f, v);
      return std::to_string(v);
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      const auto v = parse_int<std::uint32_t>(path, text, "an unsigned 32-bit integer");
      rep ? r->SetRepeatedUInt32(&msg, f, index, v) : r->SetUInt32(&msg, f, v);
      return std::to_string(v);
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      const auto v = parse_int<std::uint64_t>(path, text, "an unsigned 64-bit integer");
      rep ? r->SetRepeatedUInt64(&msg, f, index, v) : r->SetUInt64(&msg, f, v);
      return std::to_string(v);
    }
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      const double v = parse_double(path, text);
      rep ? r->SetRepeatedDouble(&msg, f, index, v) : r->SetDouble(&msg, f, v);
      return print_double(v);
    }
    case FieldDescriptor::CPPTYPE_FLOAT: {
      const double d = parse_double(path, text);
      if (std::fabs(d) > std::numeric_limits<float>::max())
        throw std::invalid_argument(path + ": value '" + text + "' is out of range for a float");
      const auto v = static_cast<float>(d);
      rep ? r->SetRepeatedFloat(&msg, f, index, v) : r->SetFloat(&msg, f, v);
      return print_double(v);
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      if (text != "true" && text != "false")
        throw std::invalid_argument(path + ": value '" + text + "' is not a bool (true or false)");
      const bool v = text == "true";
      rep ? r->SetRepeatedBool(&msg, f, index, v) : r->SetBool(&msg, f, v);
      return text;
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const auto* e = f->enum_type();
      const auto* ev = e->FindValueByName(text);
      if (ev == nullptr) {
        std::string names;
        for (int i = 0; i < e->value_count(); ++i) names += (i ? ", " : "") + e->value(i)->name();
        throw std::invalid_argument(path + ": value '" + text + "' is not a " + e->name() + " (" + names +
                                    ")");
      }
      rep ? r->SetRepeatedEnum(&msg, f, index, ev) : r->SetEnum(&msg, f, ev);
      return text;
    }
    case FieldDescriptor::CPPTYPE_STRING:
      rep ? r->SetRepeatedString(&msg, f, index, text) : r->SetString(&msg, f, text);
      return text;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  throw std::invalid_argument(path + ": not a scalar field");
}


std::string experiment_id(const std::vector<SweepOverride>& overrides) {
  std::string key;
  for (const auto& o : overrides) key += o.path + "=" + o.value + "\n";
  char buf[24];
  std::snprintf(buf, sizeof buf, "%012llx", static_cast<unsigned long long>(fnv1a(key, kSweepIdFnv1aBasis) >> 16));
  return buf;
}

// One axis of the product: a list of points, each a list of (path, value) set together.
using Point = std::vector<std::pair<std::string, std::string>>;

std::vector<Point> axis_points(const SweepAxis& axis, const std::string& where) {
  if (axis.path().empty()) fail(where + ": path is empty");
  if (axis.values().empty()) fail(axis.path() + ": axis has no values");
  std::vector<Point> points;
  for (const auto& v : axis.values()) points.push_back({{axis.path(), v}});
  return points;
}

std::vector<Point> zip_points(const SweepZip& zip, int z) {
  const std::string where = "zip[" + std::to_string(z) + "]";
  if (zip.axes().empty()) fail(where + ": has no axes");
  std::vector<Point> points;
  for (int a = 0; a < zip.axes_size(); ++a) {
    const auto axis = axis_points(zip.axes(a), where + ".axes[" + std::to_string(a) + "]");
    if (a == 0) {
      points = axis;
      continue;
    }
    if (axis.size() != points.size()) {
      fail(zip.axes(a).path() + ": zipped with " + zip.axes(0).path() + " but has " +
           std::to_string(axis.size()) + " values, not " + std::to_string(points.size()));
    }
    for (std::size_t i = 0; i < points.size(); ++i) points[i].push_back(axis[i].front());
  }
  return points;
}

}  // namespace

std::string SweepExperiment::overrides_text() const {
  std::string out;
  for (const auto& o : overrides) out += (out.empty() ? "" : "; ") + o.path + "=" + o.value;
  return out;
}

std::string apply_override(ExperimentSpec& spec, const std::string& path, const std::string& value) {
  const auto parts = split_path(path);
  Message* msg = &spec;
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& name = parts[i];
    const Descriptor* d = msg->GetDescriptor();
    const Reflection* r = msg->GetReflection();
    const FieldDescriptor* f = name.empty() ? nullptr : d->FindFieldByName(name);
    if (f == nullptr) {
      throw std::invalid_argument(path + ": unknown field '" + name + "' in " + d->name() +
                                  " (fields: " + field_names(d) + ")");
    }
    walked += (walked.empty() ? "" : ".") + name;
    if (f->containing_oneof() != nullptr && !r->HasField(*msg, f)) {
      throw std::invalid_argument(path + ": '" + walked + "' is not used by the base experiment (its oneof " +
                                  f->containing_oneof()->name() + " is set through another field)");
    }
    int index = -1;
    if (f->is_repeated()) {
      if (i + 1 == parts.size() || !is_index(parts[i + 1])) {
        throw std::invalid_argument(path + ": '" + walked + "' is a repeated field; give an element index (" +
                                    walked + ".0)");
      }
      const int size = r->FieldSize(*msg, f);
      const auto idx = parse_int<std::uint32_t>(path, parts[i + 1], "an index");
      if (idx >= static_cast<std::uint32_t>(size)) {
        throw std::invalid_argument(path + ": index " + parts[i + 1] + " is out of range ('" + walked +
                                    "' has " + std::to_string(size) + " elements in the base experiment)");
      }
      index = static_cast<int>(idx);
      walked += "." + parts[i + 1];
      ++i;
    }
    const bool last = i + 1 == parts.size();
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (last) {
        throw std::invalid_argument(
            path + ": '" + walked + "' is a message (" + f->message_type()->name() +
            "), not a value; name one of its fields: " + field_names(f->message_type()));
      }
      msg = index >= 0 ? r->MutableRepeatedMessage(msg, f, index) : r->MutableMessage(msg, f);
      continue;
    }
    if (!last) throw std::invalid_argument(path + ": '" + walked + "' is a value and has no fields");
    return set_scalar(*msg, f, index, path, value);
  }
  throw std::invalid_argument(path + ": empty field path");
}

SweepSpec parse_sweep_spec(std::string_view text, std::string_view origin) {
  SweepSpec spec;
  parse_text_or_json(text, spec, "sweep spec", origin);
  return spec;
}

Sweep load_sweep(const std::string& path) {
  const SweepSpec sweep = parse_sweep_spec(read_file(path), path);
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  ExperimentSpec base;
  std::filesystem::path base_folder = folder;
  switch (sweep.base_source_case()) {
    case SweepSpec::kBase:
      base = sweep.base();
      break;
    case SweepSpec::kBaseFile: {
      const std::string file = resolve(folder, sweep.base_file());
      try {
        base = parse_experiment_spec(read_file(file), file);
      } catch (const std::invalid_argument& e) {
        fail(std::string("base_file: ") + e.what());
      }
      base_folder = std::filesystem::path(file).parent_path();
      break;
    }
    case SweepSpec::BASE_SOURCE_NOT_SET:
      fail("base: required (base or base_file)");
  }
  // Axes name fields of the resolved experiment, so files are read into inline messages first.
  try {
    if (base.cluster_source_case() == ExperimentSpec::kClusterFile)
      *base.mutable_cluster() = load_cluster_spec(resolve(base_folder, base.cluster_file()));
    if (base.job_source_case() == ExperimentSpec::kJobFile)
      *base.mutable_job() = load_job_spec(resolve(base_folder, base.job_file()));
    resolve_cluster_jobs(base, base_folder);  // several jobs: each jobs[i].job_file
  } catch (const std::invalid_argument& e) {
    fail(std::string("base: ") + e.what());
  }
  return expand_sweep(sweep, base);
}

Sweep expand_sweep(const SweepSpec& sweep, const ExperimentSpec& base) {
  // The base must be a valid experiment on its own: its errors are reported as such, not per experiment.
  try {
    (void)validated(base);
  } catch (const std::invalid_argument& e) {
    fail(std::string("base: ") + e.what());
  }
  std::vector<std::vector<Point>> dims;
  for (int a = 0; a < sweep.axes_size(); ++a)
    dims.push_back(axis_points(sweep.axes(a), "axes[" + std::to_string(a) + "]"));
  for (int z = 0; z < sweep.zip_size(); ++z) dims.push_back(zip_points(sweep.zip(z), z));

  // Every path is checked (and every value parsed) once on the base, so a bad axis is named even when
  // another axis would make every combination invalid.
  std::set<std::string> paths;
  for (const auto& dim : dims) {
    for (const auto& [p, v] : dim.front()) {
      if (!paths.insert(p).second) fail(p + ": appears in more than one axis");
    }
    for (const auto& point : dim) {
      for (const auto& [p, v] : point) {
        ExperimentSpec probe = base;
        try {
          apply_override(probe, p, v);
        } catch (const std::invalid_argument& e) {
          fail(e.what());
        }
      }
    }
  }
  std::size_t total = 1;
  for (const auto& dim : dims) {
    if (total > kMaxSweepExperiments / dim.size())
      fail("more than " + std::to_string(kMaxSweepExperiments) + " experiments");
    total *= dim.size();
  }

  Sweep out;
  out.name = !sweep.name().empty() ? sweep.name() : (!base.name().empty() ? base.name() : "sweep");
  std::set<std::string> ids;
  std::vector<std::size_t> at(dims.size(), 0);  // odometer over the dimensions, the last fastest
  for (std::size_t n = 0; n < total; ++n) {
    SweepExperiment e;
    e.index = n;
    e.name = out.name + "-" + std::to_string(n);
    e.spec = base;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      for (const auto& [p, v] : dims[d][at[d]]) e.overrides.push_back({p, apply_override(e.spec, p, v)});
    }
    e.id = experiment_id(e.overrides);
    if (!ids.insert(e.id).second) {
      fail("experiment " + std::to_string(n) + " (" + e.overrides_text() +
           ") repeats an earlier one (a value listed twice?)");
    }
    e.spec.set_name(e.name);
    try {
      e.spec = validated(std::move(e.spec));
    } catch (const std::invalid_argument& err) {
      fail("experiment " + std::to_string(n) + " (" + e.overrides_text() + "): " + err.what());
    }
    out.experiments.push_back(std::move(e));
    for (std::size_t d = dims.size(); d-- > 0;) {
      if (++at[d] < dims[d].size()) break;
      at[d] = 0;
    }
  }
  return out;
}

}  // namespace warpsim::spec
