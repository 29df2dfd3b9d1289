// How many CTAs of the attention kernel's shape stay resident when the grid is
// launched in thread block clusters? A persistent kernel that merged a short
// unit's pieces in distributed shared memory (the one-tile probe's `split4`,
// NOTES.md "What limits it now") would launch its workers as clusters; the
// GPU places a cluster's CTAs on the SMs of one GPC, so clusters can leave SM
// slots unused that a plain grid fills. Prints, per cluster size and kernel
// shape, cudaOccupancyMaxActiveClusters x size against the plain grid's
// resident CTAs (SMs x cudaOccupancyMaxActiveBlocksPerMultiprocessor).
//
// Not part of the build: on this machine
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
//       -o cluster_occupancy tools/benchmarks/probes/cluster_occupancy.cu
// then run the binary on the GPU machine (h200_2026-12-06_peers_at_head/).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "check_cuda.h"

__global__ void Worker(int* sink) {
  extern __shared__ int smem[];
  if (threadIdx.x == 0 && blockIdx.x == 1 << 30) sink[0] = smem[0];
}

int main() {
  int device = 0, sms = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  std::printf("%s, %d SMs\n", prop.name, sms);
  CHECK_CUDA(cudaFuncSetAttribute(Worker, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  CHECK_CUDA(cudaFuncSetAttribute(Worker, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  struct Shape {
    const char* what;
    int threads, smem_kb;
  };
  // The decode and general kernels (160 threads, two CTAs an SM), one CTA an
  // SM with member pairs (384 threads).
  const Shape shapes[] = {{"160 threads, 91 KB", 160, 91},
                          {"160 threads, 112 KB", 160, 112},
                          {"384 threads, 200 KB", 384, 200}};
  for (const Shape& shape : shapes) {
    int per_sm = 0;
    CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Worker, shape.threads,
                                                             size_t{1024} * shape.smem_kb));
    std::printf("%-22s plain grid: %d CTAs resident (%d an SM)\n", shape.what, sms * per_sm,
                per_sm);
    for (int cluster : {2, 4, 8, 16}) {
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(cluster * 64);
      config.blockDim = dim3(shape.threads);
      config.dynamicSmemBytes = size_t{1024} * shape.smem_kb;
      cudaLaunchAttribute attribute;
      attribute.id = cudaLaunchAttributeClusterDimension;
      attribute.val.clusterDim.x = cluster;
      attribute.val.clusterDim.y = 1;
      attribute.val.clusterDim.z = 1;
      config.attrs = &attribute;
      config.numAttrs = 1;
      int clusters = 0;
      const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, Worker, &config);
      if (e != cudaSuccess) {
        std::printf("%-22s clusters of %2d: %s\n", "", cluster, cudaGetErrorString(e));
        (void)cudaGetLastError();
        continue;
      }
      std::printf(
          "%-22s clusters of %2d: %3d clusters, %3d CTAs resident (%.1f%% of the plain grid)\n", "",
          cluster, clusters, clusters * cluster, 100.0 * clusters * cluster / (sms * per_sm));
    }
  }
  return 0;
}
