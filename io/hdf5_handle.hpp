// RAII ownership of HDF5 identifiers (files, groups, datasets, dataspaces, types, property lists) and a
// checked-call helper, shared by the series writer and the file inspector.
#pragma once

#include <hdf5.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace warpsim::io::h5 {

class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer close, const std::string& what) : id_(id), close_(close) {
    if (id < 0) throw std::runtime_error("HDF5: " + what + " failed");
  }
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, -1)), close_(other.close_) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, -1);
      close_ = other.close_;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }  // NOLINT: handles are passed straight to the C API
  // Closes now and reports failure (a file's close is where collective writes finish).
  void close(const std::string& what) {
    const herr_t status = id_ >= 0 ? close_(id_) : 0;
    id_ = -1;
    if (status < 0) throw std::runtime_error("HDF5: closing " + what + " failed");
  }

 private:
  void reset() {
    if (id_ >= 0) close_(id_);
    id_ = -1;
  }
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

inline void check(herr_t status, const std::string& what) {
  if (status < 0) throw std::runtime_error("HDF5: " + what + " failed");
}

inline Handle file(hid_t id, const std::string& what) {
  return Handle(id, H5Fclose, what);
}
inline Handle group(hid_t id, const std::string& what) {
  return Handle(id, H5Gclose, what);
}
inline Handle dataset(hid_t id, const std::string& what) {
  return Handle(id, H5Dclose, what);
}
inline Handle space(hid_t id, const std::string& what) {
  return Handle(id, H5Sclose, what);
}
inline Handle type(hid_t id, const std::string& what) {
  return Handle(id, H5Tclose, what);
}
inline Handle plist(hid_t id, const std::string& what) {
  return Handle(id, H5Pclose, what);
}
inline Handle attribute(hid_t id, const std::string& what) {
  return Handle(id, H5Aclose, what);
}

// A variable-length UTF-8 string type (h5py reads it as str).
inline Handle string_type() {
  Handle t = type(H5Tcopy(H5T_C_S1), "copying the string type");
  check(H5Tset_size(t, H5T_VARIABLE), "sizing the string type");
  check(H5Tset_cset(t, H5T_CSET_UTF8), "setting UTF-8");
  return t;
}

}  // namespace warpsim::io::h5
