// CHECK_CUDA for the standalone probes in this folder (each built by the nvcc
// line in its header): a failed runtime call prints where and why and exits.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(x)                                                                        \
  do {                                                                                       \
    const cudaError_t e = (x);                                                               \
    if (e != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)
