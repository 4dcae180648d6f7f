// Appending a table of 1-D datasets to a finished HDF5 file (see hdf5_table_writer.hpp).
#include "io/hdf5_table_writer.hpp"

#include <hdf5.h>

#include <algorithm>
#include <stdexcept>

#include "io/hdf5_handle.hpp"
#include "io/hdf5_write_helpers.hpp"

namespace warpsim::io {

void append_table(const std::string& path, const std::string& group, const std::vector<TableColumn>& columns,
                  const std::vector<std::pair<std::string, std::string>>& attributes) {
  std::size_t rows = 0;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::size_t n = std::visit([](const auto& v) { return v.size(); }, columns[i].values);
    if (i > 0 && n != rows) throw std::runtime_error("table " + group + ": columns of different lengths");
    rows = n;
  }
  h5::Handle file = h5::file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "opening " + path);
  h5::Handle lcpl = h5::plist(H5Pcreate(H5P_LINK_CREATE), "link creation list");
  h5::check(H5Pset_create_intermediate_group(lcpl, 1), "intermediate groups");
  h5::Handle g =
      h5::group(H5Gcreate2(file, group.c_str(), lcpl, H5P_DEFAULT, H5P_DEFAULT), "creating " + group);
  for (const auto& [name, value] : attributes) detail::write_text_attribute(g, name, value);
  const hsize_t dims[1] = {static_cast<hsize_t>(rows)};
  for (const TableColumn& c : columns) {
    h5::Handle space = h5::space(H5Screate_simple(1, dims, nullptr), "table space");
    const bool real = std::holds_alternative<std::vector<double>>(c.values);
    const hid_t file_type = real ? H5T_IEEE_F64LE : H5T_STD_I64LE;
    const hid_t mem_type = real ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
    // Chunked and deflated like the series: a table of a long horizon holds thousands of rows.
    h5::Handle dcpl = h5::plist(H5Pcreate(H5P_DATASET_CREATE), "dataset creation list");
    if (rows > 0) {
      const hsize_t chunk[1] = {std::min<hsize_t>(rows, 65536)};
      h5::check(H5Pset_chunk(dcpl, 1, chunk), "chunking " + c.name);
      h5::check(H5Pset_deflate(dcpl, 2), "deflating " + c.name);
    }
    h5::Handle d =
        h5::dataset(H5Dcreate2(g, c.name.c_str(), file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                    "creating " + group + "/" + c.name);
    const void* data = real ? static_cast<const void*>(std::get<std::vector<double>>(c.values).data())
                            : static_cast<const void*>(std::get<std::vector<std::int64_t>>(c.values).data());
    if (rows > 0) h5::check(H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "writing " + c.name);
    detail::write_text_attribute(d, "unit", c.unit);
    detail::write_text_attribute(d, "description", c.description);
    detail::write_text_attribute(d, "dimensions", "row");
  }
  file.close(path);
}

}  // namespace warpsim::io
