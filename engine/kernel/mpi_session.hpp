// RAII ownership of MPI_Init/MPI_Finalize for a process (the warpsim binary and the MPI test runners).
#pragma once

#include <mpi.h>

namespace warpsim {

class MpiSession {
 public:
  MpiSession(int* argc, char*** argv) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      MPI_Init(argc, argv);
      owner_ = true;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiSession() {
    if (owner_) MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  bool owner_ = false;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace warpsim
