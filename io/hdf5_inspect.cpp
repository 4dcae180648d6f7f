// Reading warpsim series files for `warpsim inspect` (see hdf5_inspect.hpp).
#include "io/hdf5_inspect.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "io/hdf5_handle.hpp"
#include "io/hdf5_reader.hpp"

namespace warpsim::io {

namespace {

std::string shape_of(hid_t ds) {
  h5::Handle space = h5::space(H5Dget_space(ds), "dataset space");
  const int n = H5Sget_simple_extent_ndims(space);
  if (n < 0 || n > H5S_MAX_RANK) throw std::runtime_error("HDF5: reading a dataset's rank failed");
  std::vector<hsize_t> dims(static_cast<std::size_t>(n));
  h5::check(H5Sget_simple_extent_dims(space, dims.data(), nullptr), "reading a dataset's shape");
  if (n == 0) return "scalar";
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(dims[static_cast<std::size_t>(i)]);
  return s + "]";
}

std::string type_of(hid_t ds) {
  h5::Handle t = h5::type(H5Dget_type(ds), "dataset type");
  const std::size_t bytes = H5Tget_size(t);
  switch (H5Tget_class(t)) {
    case H5T_FLOAT:
      return "float" + std::to_string(8 * bytes);
    case H5T_INTEGER:
      return (H5Tget_sign(t) == H5T_SGN_NONE ? "uint" : "int") + std::to_string(8 * bytes);
    case H5T_STRING:
      return "string";
    default:
      return "other";
  }
}

struct Listing {
  std::vector<std::string> lines;
  std::exception_ptr error;
};

herr_t visit(hid_t root, const char* name, const H5O_info_t* info, void* data) {
  auto* listing = static_cast<Listing*>(data);
  return guarded_callback(&listing->error, [&]() -> herr_t {
    if (listing->lines.size() >= 100'000) throw std::runtime_error("more than 100000 objects");
    if (std::string(name) == ".") return 0;
    std::ostringstream line;
    if (info->type == H5O_TYPE_GROUP) {
      line << "/" << name << "/";
    } else if (info->type == H5O_TYPE_DATASET) {
      h5::Handle ds = h5::dataset(H5Dopen2(root, name, H5P_DEFAULT), std::string("opening ") + name);
      line << "/" << name << "  " << shape_of(ds) << " " << type_of(ds);
      const std::string unit = read_text_attribute(ds, "unit");
      if (!unit.empty()) line << "  unit=" << unit;
      const std::string aggregation = read_text_attribute(ds, "aggregation");
      if (!aggregation.empty()) line << "  aggregation=" << aggregation;
    } else {
      return 0;
    }
    listing->lines.push_back(line.str());
    return 0;
  });
}

struct AttributePrinter {
  std::ostream* out;
  std::exception_ptr error;
};

herr_t print_attribute(hid_t object, const char* name, const H5A_info_t*, void* data) {
  auto* printer = static_cast<AttributePrinter*>(data);
  return guarded_callback(&printer->error, [&]() -> herr_t {
    std::ostringstream out;
    h5::Handle attr =
        h5::attribute(H5Aopen(object, name, H5P_DEFAULT), std::string("opening attribute ") + name);
    h5::Handle t = h5::type(H5Aget_type(attr), "attribute type");
    out << "  " << name << ": ";
    const H5T_class_t type_class = H5Tget_class(t);
    if ((type_class == H5T_INTEGER || type_class == H5T_FLOAT) && element_count(attr, true) != 1) {
      out << "(not shown)\n";
      *printer->out << out.str();
      return 0;
    }
    switch (type_class) {
      case H5T_STRING:
        out << read_text_attribute(object, name);
        break;
      case H5T_INTEGER: {
        std::int64_t v = 0;
        h5::check(H5Aread(attr, H5T_NATIVE_INT64, &v), "reading attribute");
        out << v;
        break;
      }
      case H5T_FLOAT: {
        double v = 0;
        h5::check(H5Aread(attr, H5T_NATIVE_DOUBLE, &v), "reading attribute");
        out << v;
        break;
      }
      default:
        out << "(not shown)";
    }
    out << '\n';
    *printer->out << out.str();
    return 0;
  });
}

}  // namespace

void describe_series_file(const std::string& path, std::ostream& out) {
  // Read whole before printing, so that a damaged file prints its error and nothing else.
  const std::string text = read_series_file(path, [&] {
    h5::Handle file = open_series_file(path);
    Listing listing;
    const herr_t visited = H5Ovisit(file, H5_INDEX_NAME, H5_ITER_INC, visit, &listing);
    if (listing.error) std::rethrow_exception(listing.error);
    h5::check(visited, "listing " + path);
    std::ostringstream text;
    text << "file: " << path << '\n';
    for (const std::string& line : listing.lines) text << line << '\n';
    if (H5Lexists(file, "meta", H5P_DEFAULT) > 0) {
      h5::Handle meta = h5::group(H5Gopen2(file, "meta", H5P_DEFAULT), "opening /meta");
      text << "meta:\n";
      hsize_t index = 0;
      AttributePrinter printer{&text, nullptr};
      const herr_t iterated =
          H5Aiterate2(meta, H5_INDEX_NAME, H5_ITER_INC, &index, print_attribute, &printer);
      if (printer.error) std::rethrow_exception(printer.error);
      h5::check(iterated, "reading /meta");
    }
    return text.str();
  });
  out << text;
}

void print_summary(const std::string& path, std::ostream& out) {
  const auto rows = read_series_file(path, [&] {
    h5::Handle file = open_series_file(path);
    return read_summary(file);
  });
  out << "summary:\n";
  for (const auto& [name, value, unit] : rows) {
    std::ostringstream v;
    v << std::setprecision(12) << value;
    out << "  " << name << ": " << v.str() << (unit.empty() ? "" : " " + unit) << '\n';
  }
}

std::vector<std::string> list_metrics(const std::string& path) {
  return read_series_file(path, [&] {
    h5::Handle file = open_series_file(path);
    return series_metrics(file);
  });
}

std::vector<ComponentScore> hottest_components(const std::string& path, const std::string& metric,
                                               std::size_t top, std::string* aggregation_out,
                                               std::string* unit_out) {
  return read_series_file(path, [&] {
    h5::Handle file = open_series_file(path);
    SeriesDataset series = open_series(file, metric);
    const std::string aggregation = read_text_attribute(series.dataset, "aggregation");
    if (aggregation_out) *aggregation_out = aggregation;
    if (unit_out) *unit_out = read_text_attribute(series.dataset, "unit");
    const std::vector<std::string> names = component_names(file, series.kind, series.components);

    std::vector<ComponentScore> scores;
    scores.reserve(series.components);
    // Rows in blocks so that a large file is never read whole.
    const std::uint64_t block =
        std::max<std::uint64_t>(1, (1u << 20) / std::max<std::uint64_t>(1, series.samples));
    for (std::uint64_t first = 0; first < series.components; first += block) {
      const std::uint64_t rows = std::min(block, series.components - first);
      const std::vector<double> v = read_rows(series, first, rows);
      for (std::uint64_t r = 0; r < rows; ++r) {
        const double* row = v.data() + r * series.samples;
        double score = 0;
        if (aggregation == "max") {
          score = series.samples ? -std::numeric_limits<double>::infinity() : 0;
          for (std::uint64_t s = 0; s < series.samples; ++s) score = std::max(score, row[s]);
        } else {
          for (std::uint64_t s = 0; s < series.samples; ++s) score += row[s];
          if (aggregation == "time_average" && series.samples) score /= static_cast<double>(series.samples);
        }
        const std::uint64_t id = first + r;
        scores.push_back(ComponentScore{id, names.empty() ? std::string() : names[id], score});
      }
    }
    const std::size_t n = std::min(top, scores.size());
    std::partial_sort(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(n), scores.end(),
                      [](const ComponentScore& a, const ComponentScore& b) {
                        return a.score != b.score ? a.score > b.score : a.id < b.id;
                      });
    scores.resize(n);
    return scores;
  });
}

}  // namespace warpsim::io
