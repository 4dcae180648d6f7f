// The shape of the matrix multiply a compute op performs, carried on the op so that the compute model can
// charge tile and wave quantization (compute_model.hpp). Kept apart from the op vocabulary (ops.hpp) because
// both the ops and the compute model's input (ComputeWork) carry it.
#pragma once

namespace warpsim::workload {

// C[m x n] = A[m x k] * B[k x n], `batch` independent products of that shape in one kernel (batched or
// grouped GEMM: attention heads, local experts). m == 0 means "not a GEMM or shape unknown": no quantization.
// `backward` marks the op as the backward pass of that GEMM, which is two GEMMs of other shapes with the
// same FLOPs each: dgrad dA = dC * B^T (output m x k, inner n) and wgrad dB = A^T * dC (output k x n,
// inner m).
struct GemmShape {
  double m = 0, n = 0, k = 0;
  double batch = 1;
  bool backward = false;

  bool valid() const { return m > 0 && n > 0 && k > 0 && batch > 0; }
  bool operator==(const GemmShape&) const = default;
};

}  // namespace warpsim::workload
