// GoogleTest main for every warpsim test binary: owns MPI for the process, and lets only rank 0 print
// results so mpiexec output stays readable (failures on any rank still fail the run).
#include <gtest/gtest.h>
#include <mpi.h>

#include "engine/kernel/mpi_session.hpp"

int main(int argc, char** argv) {
  warpsim::MpiSession mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (mpi.rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any_failed;
}
